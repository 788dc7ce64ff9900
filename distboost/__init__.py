"""distboost: distributional regression with gradient-boosted trees and torch autograd."""

from . import families, links

__version__ = "0.1.0"

__all__ = ["families", "links", "__version__"]
