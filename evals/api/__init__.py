"""The eval sets' REST edge (DRF): the only package of evals that imports it."""
