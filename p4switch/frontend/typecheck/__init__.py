"""The ``typecheck`` pass (``checker.Checker``), one module per concern."""
