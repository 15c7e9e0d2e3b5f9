"""The ``fabricctl`` command: the controller's operator commands plus the commands that sit
above the controller (named experiments, sweeps and tuning on Dask, in ``experiments``).

This package is the top of the import graph: it may import the controller and the experiments,
which never import it, so adding experiment commands creates no package cycle.
"""
