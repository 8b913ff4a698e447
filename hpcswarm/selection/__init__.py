"""One search, declared and run: methods, specification, preprocessing."""
