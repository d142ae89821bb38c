"""Links (layers with parameters): ``import cvzoo.core.links as L``.

Link, Chain, ChainList and Sequential, then the layer links, one per module, re-exported
here flat.
"""

from cvzoo.core.links.link import Chain, ChainList, Link
from cvzoo.core.links.sequential import Sequential
