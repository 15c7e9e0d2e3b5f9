"""The ``fabricctl`` command as installed: the controller's commands plus those of the packages
above it (experiments), which the controller cannot import without a package cycle."""
