"""The family registry: names -> family factories.

``register`` works as a decorator on a :class:`~distboost.families.Family` subclass (or is
called with a name and a factory); ``get`` builds a family from its name, with optional link
overrides; ``available`` lists the names; ``from_state`` rebuilds a family from
:meth:`Family.get_state` (wrappers included, through ``register_wrapper``).  Modelled on
``torch.distributions``' ``constraint_registry``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .base import Family

__all__ = ["register", "get", "available", "from_state", "register_wrapper"]

_REGISTRY: dict[str, Callable[..., Family]] = {}
#: Prefix resolvers, e.g. ``censored_`` -> a wrapper factory taking the inner family.
_PREFIXES: dict[str, Callable[[Family], Family]] = {}
#: Wrapper kinds of a family state, e.g. ``truncated`` -> a factory ``(inner, **args)``.
_WRAPPERS: dict[str, Callable[..., Family]] = {}


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


def register_wrapper(kind: str, factory: Callable[..., Family]) -> None:
    """Make ``from_state({"wrapper": kind, "inner": state, **args})`` return
    ``factory(from_state(state), **args)``."""
    _WRAPPERS[kind] = factory


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
        return family.with_links(links) if links else family
    if isinstance(family, str):
        if family in _REGISTRY:
            return _REGISTRY[family](links=links)
        for prefix, wrapper in _PREFIXES.items():
            if family.startswith(prefix) and family[len(prefix):] in _REGISTRY:
                return wrapper(_REGISTRY[family[len(prefix):]](links=links))
    raise ValueError(
        f"Unknown family {family!r}; known families are {available()}."
    )


def from_state(state: Mapping) -> Family:
    """Rebuild a family from :meth:`Family.get_state` (the persistence layer's format).

    Parameters
    ----------
    state : dict
        ``{"name": registered name, "links": {...}, **constructor arguments}``, or for a
        wrapper ``{"wrapper": kind, "inner": state, **constructor arguments}``.

    Returns
    -------
    Family
        A family whose ``get_state()`` equals ``state``.

    Raises
    ------
    ValueError
        For a state that is not a mapping, an unknown name or wrapper kind, or arguments the
        family does not take (the message names them).
    """
    if not isinstance(state, Mapping):
        raise ValueError(f"A family state is a dict; got {type(state).__name__}.")
    args = dict(state)
    if "wrapper" in args:
        kind = args.pop("wrapper")
        if kind not in _WRAPPERS:
            raise ValueError(
                f"Unknown family wrapper {kind!r} in a saved state; known wrappers are "
                f"{sorted(_WRAPPERS)}."
            )
        if "inner" not in args:
            raise ValueError(f"The state of a {kind!r} family has no 'inner' family state.")
        inner = from_state(args.pop("inner"))
        factory = _WRAPPERS[kind]
        return _call(factory, args, f"wrapper {kind!r}", inner)
    name = args.pop("name", None)
    if name not in _REGISTRY:
        raise ValueError(f"Unknown family {name!r} in a saved state; known families are "
                         f"{available()}.")
    return _call(_REGISTRY[name], args, f"family {name!r}")


def _call(factory, args: dict, what: str, *positional) -> Family:
    try:
        return factory(*positional, **args)
    except TypeError as err:
        raise ValueError(f"Cannot rebuild {what} from a saved state with arguments "
                         f"{sorted(args)}: {err}") from err
