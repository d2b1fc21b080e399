# The plugin imports the loader and the engine at the first case file it collects. An
# in-process pytester run removes the modules imported during it, and numpy cannot be
# imported twice in one process: import them here, before any pytester run.
import kspread.format.loader
import kspread.workflow.runner  # noqa: F401

pytest_plugins = ["pytester"]
