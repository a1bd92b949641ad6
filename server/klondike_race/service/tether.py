"""Imported first thing by the solver's fork server (node/solving.py preloads it): the
fork server then dies with its node, SIGKILL included, and its workers with it."""

from .embedded import die_with_parent

die_with_parent()
