"""Theory: one public module per paper (settings, closed forms, bounds); no plotting, no files.

Import the topic module, e.g. ``from ntsim.theory import linear_teachers``
(Shachaf et al. 2021). Every function names the equation it implements.
"""
