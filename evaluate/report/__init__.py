"""Tables and plots from stored results files: ``rqbench report`` and the figures it writes."""
