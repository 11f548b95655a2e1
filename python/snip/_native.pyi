"""Type stubs of ``snip._native``, the Rust extension (crates/snip-py).

Sizes are in bytes of UTF-8 unless a name says otherwise. Every function reads the
``SNIP_*`` environment variables on every call; keyword options override them for
one call (``max_bytes=4096`` is ``SNIP_MAX_BYTES=4096``).
"""

from typing import Any, Literal, TypedDict, overload

__version__: str
#: The default budget in bytes (``SNIP_MAX_BYTES`` when unset): 24,576.
DEFAULT_MAX_BYTES: int

class RuleCounts(TypedDict, total=False):
    """One rule that changed something: its id plus named counts (for example
    ``frames_removed``, ``lines_elided``, ``bytes_elided``)."""

    id: str

class _ReceiptBase(TypedDict):
    output_encoding: Literal["utf-8", "utf-8-lossy"]
    changed: bool
    original_bytes: int
    output_bytes: int
    rules: list[RuleCounts]
    id: str | None
    retained: bool
    lossy: bool
    retention: Literal["retained", "off", "failed"] | None
    retention_error: str | None
    failed_open: str | None

class Receipt(_ReceiptBase):
    """What :func:`compress` returns. ``output`` has the type of the input."""

    output: Any

class TextReceipt(_ReceiptBase):
    output: str

class BytesReceipt(_ReceiptBase):
    output: bytes

class SearchMatch(TypedDict):
    line: int
    byte: int

class RestoreResponse(TypedDict, total=False):
    """The store's answer to a restore call (see ``docs/restore.md``)."""

    status: Literal["ok", "not_found", "expired", "too_large", "invalid", "unavailable", "error"]
    id: str
    mode: Literal["bytes", "lines", "search", "full"]
    field: str
    content: str | None
    encoding: Literal["utf-8", "utf-8-lossy"]
    content_base64: str
    start: int | None
    end: int | None
    next: int | None
    byte_start: int
    byte_end: int
    total_bytes: int | None
    scope_bytes: int
    total_lines: int
    sha256: str | None
    matches: list[SearchMatch]
    total_matches: int
    note: str

ConfigDict = dict[str, str]

@overload
def compress(text: str, /, **opts: Any) -> TextReceipt: ...
@overload
def compress(text: bytes, /, **opts: Any) -> BytesReceipt: ...
def restore(
    id: str,
    mode: str | None = None,
    *,
    start: int | None = None,
    end: int | None = None,
    query: str | None = None,
    field: str | None = None,
    max_bytes: int | None = None,
    context: int | None = None,
    align: Literal["token"] | None = None,
    **opts: Any,
) -> RestoreResponse: ...
def restore_call(args: dict[str, Any], /, **opts: Any) -> RestoreResponse:
    """A restore call given as one dict of a tool call's arguments."""

def flush() -> None:
    """Writes the originals and ledger rows the store still holds (registered at exit)."""

def restore_schema() -> dict[str, Any]:
    """The JSON Schema of a restore request (``docs/schema/snip_restore.json``)."""

def compress_parts(parts: list[str], /, **opts: Any) -> list[TextReceipt]:
    """Compresses ``parts`` so that together they fit one budget; one receipt each."""

def compress_json_fields(
    text: str, keep_keys: list[str], /, **opts: Any
) -> tuple[bool, str | None]:
    """A JSON result's string fields compressed one by one: ``(is_json, new_text)``,
    ``new_text`` ``None`` when nothing changed."""

def config(**opts: Any) -> ConfigDict: ...
def compress_messages(messages_json: str, /, **settings: Any) -> str | None:
    """The conversation pass over a JSON list of messages: the new list as JSON, or
    ``None`` when nothing changed (or on any failure)."""
