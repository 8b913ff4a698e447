"""A job: job file, plan, protocols, task farm, checkpoint, lock, progress, stop."""
