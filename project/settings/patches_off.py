"""The framework patches (project/patches/) a deployment puts off, to bisect a bug."""

from django.core.exceptions import ImproperlyConfigured

from project import patches
from project.settings.base import env_list

# The framework patches (project/patches/) put off, by name, comma-separated, or
# "all": the frameworks' own paths, to bisect a bug (docs/architecture/project.md).
TOOLCRIB_PATCHES_OFF = frozenset(env_list("TOOLCRIB_PATCHES_OFF"))
if "all" in TOOLCRIB_PATCHES_OFF:
    TOOLCRIB_PATCHES_OFF = frozenset(patches.NAMES)
if TOOLCRIB_PATCHES_OFF - set(patches.NAMES):
    raise ImproperlyConfigured(
        f"TOOLCRIB_PATCHES_OFF names no patch: {sorted(TOOLCRIB_PATCHES_OFF)};"
        f" the patches are {', '.join(patches.NAMES)}."
    )


def patch_on(name: str) -> bool:
    return name not in TOOLCRIB_PATCHES_OFF
