"""The runner: a child process that loads a built kernel and calls it, and the
parent-side session that drives it. The child holds no oracle data."""
