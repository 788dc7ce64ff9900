"""The family registry: names -> family factories.

``register`` works as a decorator on a :class:`~distboost.families.Family` subclass (or is
called with a name and a factory); ``get`` builds a family from its name, with optional link
overrides; ``available`` lists the names.  Modelled on ``torch.distributions``'
``constraint_registry``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .base import Family

__all__ = ["register", "get", "available"]

_REGISTRY: dict[str, Callable[..., Family]] = {}
#: Prefix resolvers, e.g. ``censored_`` -> a wrapper factory taking the inner family.
_PREFIXES: dict[str, Callable[[Family], Family]] = {}


def register(name_or_cls=None, factory: Callable[..., Family] | None = None):
    """Register a family under a name.

    Use as a decorator on a ``Family`` subclass (its ``name`` attribute is used), as
    ``@register("myname")``, or as a call ``register("myname", factory)`` where ``factory``
    accepts ``links=`` and returns a ``Family``.
    """
    if isinstance(name_or_cls, type) and issubclass(name_or_cls, Family):
        _add(name_or_cls.name, name_or_cls)
        return name_or_cls
    if isinstance(name_or_cls, str) and factory is not None:
        _add(name_or_cls, factory)
        return factory

    def decorator(obj):
        _add(name_or_cls or obj.name, obj)
        return obj

    return decorator


def _add(name: str, factory) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"A family needs a non-empty string name, got {name!r}.")
    _REGISTRY[name] = factory


def register_prefix(prefix: str, wrapper: Callable[[Family], Family]) -> None:
    """Make ``get(prefix + name)`` return ``wrapper(get(name))`` (e.g. ``censored_``)."""
    _PREFIXES[prefix] = wrapper


def available() -> list[str]:
    """Names of the registered families, sorted."""
    return sorted(_REGISTRY)


def get(family: str | Family, links: Mapping[str, str] | None = None) -> Family:
    """A family from its name, or the family itself.

    Parameters
    ----------
    family : str or Family
        A registered name (see :func:`available`) or a ``Family`` instance.
    links : dict of str to str, optional
        Link overrides by parameter name, e.g. ``{"rate": "softplus"}``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones) or an unknown parameter
        or link name.
    """
    if isinstance(family, Family):
        if links:
            return type(family)(links={**family.get_params()["links"], **links})
        return family
    if isinstance(family, str):
        if family in _REGISTRY:
            return _REGISTRY[family](links=links)
        for prefix, wrapper in _PREFIXES.items():
            if family.startswith(prefix) and family[len(prefix):] in _REGISTRY:
                return wrapper(_REGISTRY[family[len(prefix):]](links=links))
    raise ValueError(
        f"Unknown family {family!r}; known families are {available()}."
    )
