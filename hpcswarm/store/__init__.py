"""What hpcswarm writes and how: whole files, allowed outputs, tags, typed records."""
