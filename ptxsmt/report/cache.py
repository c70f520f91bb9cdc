"""`ptxsmt cache`: where compiled programs are kept."""

from __future__ import annotations


def cache_text(info: dict[str, object], removed: int | None = None) -> str:
    if removed is not None:
        return f"removed {removed} cache file{'' if removed == 1 else 's'} from {info['directory']}"
    if not info["enabled"]:
        return f"cache: off (--no-cache or PTXSMT_NO_CACHE); directory {info['directory']}"
    lines = [f"cache directory: {info['directory']}", f"this build's file: {info['file']}",
             f"programs: {info['programs']:,}"]
    if info["other_builds"]:
        lines.append(f"files of other builds: {len(info['other_builds'])} "
                     "(removed after a week unused)")
    if info["problem"]:
        lines.append(f"not usable, skipped: {info['problem']}")
    return "\n".join(lines)
