"""Results files, the papers' tables and their plots."""
