"""From a search's subset to a signature: refinements, stability, gene lists."""
