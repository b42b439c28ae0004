"""Updraft on one machine: an embedded AWS (moto) and the in-process pieces that stand in for Lambda."""
