"""Finding what a package's modules register: the sources (``adapters/``) and the
output shapes (``translator/output/shapes/``) are each one module that defines one name, so
adding either is adding a module. One rule for both."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import TypeVar

T = TypeVar("T")


def registered(package: ModuleType, attribute: str, kind: type[T]) -> list[T]:
    """Each module of ``package`` (by name; ``_`` modules are helpers, skipped) that
    defines ``attribute`` as a ``kind``. Only this package's own path is searched."""
    found: list[T] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        value = getattr(module, attribute, None)
        if isinstance(value, kind):
            found.append(value)
    return found
