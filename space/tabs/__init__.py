"""The Space's tabs, one module each: its widgets and the handlers that drive them, side by side.

Each module's ``build`` runs inside the page's ``gr.Tabs``, lays out its tab,
wires the events that stay within it, and returns the components that the
page-wide refresh and the page load need. ``rqbench.space.ui.build_app``
assembles them in this order.
"""

from rqbench.space.tabs import about, annotate, browse, expert_study, judges, leaderboard, plots, submit

__all__ = ["about", "annotate", "browse", "expert_study", "judges", "leaderboard", "plots", "submit"]
