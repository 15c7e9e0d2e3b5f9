"""Named experiments that reproduce claims of the literature on the virtual-time fabric, and
parameter sweeps of them on Dask.

An experiment (``base.Experiment``) is a spec (topology, profiles and settings, workload,
seeds) cut into independent points; each point is one deterministic simulation returning
metrics; the report turns the points' metrics into a table, plots and one line per claim.
``fabricctl experiment run NAME`` runs the points in process; ``fabricctl sweep`` runs the
same points, crossed with a parameter grid, on a Dask cluster.
"""
