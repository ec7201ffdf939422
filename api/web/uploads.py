"""Reading a submission upload: multipart parsed as it streams, limits and file names checked.

The file count and each file's size are checked while the parts arrive (the
whole body is bounded by api/web/bodylimit.py before this runs), so a hostile
upload is refused before it is held in full. File names must be plain names
of source files: no directories, no hidden files, no odd characters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from api.settings import Settings
from judge.backends import Backend
from judge.errors import SubmissionFormatError, UserFacingError
from judge.modes import RunMode
from judge.submission import check_content, check_name

_MAX_FIELD_BYTES = 256  # problem and backend are short words
_MAX_FIELDS = 8


class UploadTooLargeError(UserFacingError):
    """Too many files or too many bytes (413)."""


class UploadInvalidError(UserFacingError):
    """The upload cannot be used as it is (422)."""


class UploadMediaTypeError(UserFacingError):
    """Not multipart/form-data (415)."""


@dataclass(frozen=True)
class UploadForm:
    problem: str
    backend: Backend
    files: list[tuple[str, bytes]]  # (checked name, content), in upload order
    csrf: str = ""  # the page form's token (the JSON API authenticates by header and has none)
    mode: RunMode = RunMode.RANKED  # docs/rules.md "Run modes"; an upload without the field is ranked


def check_file_name(name: str, backend: Backend | None = None) -> str:
    """The name unchanged when it is a plain source file name (of a type `backend`'s policy accepts,
    when given); UploadInvalidError saying why not.

    The engine's rule (judge.submission.check_name) decides, so the API never
    accepts a name a worker would refuse; the first checks only word the
    commonest refusals more plainly.
    """
    if not name:
        raise UploadInvalidError("a file has no name")
    if "/" in name or "\\" in name:
        raise UploadInvalidError(f"file name {name!r} contains a path; upload plain file names, no directories")
    if name.startswith("."):
        raise UploadInvalidError(f"file name {name!r} is hidden or a parent-directory reference")
    try:
        return check_name(name, backend)
    except SubmissionFormatError as error:
        raise UploadInvalidError(str(error)) from None


@dataclass
class _Part:
    name: str = ""
    filename: str | None = None
    data: bytearray = field(default_factory=bytearray)


class _Collector:
    """python-multipart callbacks that enforce the limits as the parts stream in."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.parts: list[_Part] = []
        self.part = _Part()
        self.header_name = b""
        self.header_value = b""
        self.disposition = b""
        self.files = 0
        self.fields = 0

    def callbacks(self) -> dict[str, object]:
        return {
            "on_part_begin": self.on_part_begin,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
            "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value,
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
        }

    def on_part_begin(self) -> None:
        self.part, self.disposition = _Part(), b""

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        if self.header_name.lower() == b"content-disposition":
            self.disposition = self.header_value
        self.header_name = self.header_value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.disposition)
        self.part.name = options.get(b"name", b"").decode("utf-8", "replace")
        if b"filename" in options:
            self.part.filename = options[b"filename"].decode("utf-8", "replace")
            self.files += 1
            if self.files > self.settings.max_files:
                raise UploadTooLargeError(f"too many files: at most {self.settings.max_files} per submission")
        else:
            self.fields += 1
            if self.fields > _MAX_FIELDS:
                raise UploadInvalidError(f"too many form fields: at most {_MAX_FIELDS}")

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        self.part.data += data[start:end]
        if self.part.filename is not None and len(self.part.data) > self.settings.max_file_bytes:
            raise UploadTooLargeError(
                f"file {self.part.filename!r} is over the limit of {self.settings.max_file_bytes} bytes per file"
            )
        if self.part.filename is None and len(self.part.data) > _MAX_FIELD_BYTES:
            raise UploadInvalidError(f"form field {self.part.name!r} is too long")

    def on_part_end(self) -> None:
        self.parts.append(self.part)


async def read_upload(request: Request, settings: Settings) -> UploadForm:
    """Parse and check a submission upload: fields `problem`, `backend`, and one or more `files`."""
    content_type, params = parse_options_header(request.headers.get("content-type", ""))
    if content_type != b"multipart/form-data" or b"boundary" not in params:
        raise UploadMediaTypeError("send the submission as multipart/form-data (fields problem, backend, files)")
    collector = _Collector(settings)
    try:
        # Inside the try: python-multipart refuses a boundary over 256 bytes as it builds the parser.
        parser = MultipartParser(params[b"boundary"], collector.callbacks())  # type: ignore[arg-type]
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except UserFacingError:
        raise
    except Exception as error:  # python-multipart's own errors: malformed body
        raise UploadInvalidError(f"the multipart body is malformed ({type(error).__name__}: {error})") from error
    return _form(collector.parts)


def _content(name: str, content: bytes) -> bytes:
    try:
        return check_content(name, content)
    except SubmissionFormatError as error:
        raise UploadInvalidError(str(error)) from None


def _form(parts: list[_Part]) -> UploadForm:
    fields = {p.name: p.data.decode("utf-8", "replace").strip() for p in parts if p.filename is None}
    problem = fields.get("problem", "")
    if not problem:
        raise UploadInvalidError("the 'problem' field is missing")
    raw_backend = fields.get("backend", "")
    if not raw_backend:
        raise UploadInvalidError(f"the 'backend' field is missing; backends: {', '.join(b.value for b in Backend)}")
    try:
        backend = Backend(raw_backend)
    except ValueError:
        raise UploadInvalidError(
            f"unknown backend {raw_backend!r}; backends: {', '.join(b.value for b in Backend)}"
        ) from None
    mode = _mode(fields.get("mode", ""))
    files: list[tuple[str, bytes]] = []
    seen: set[str] = set()
    for part in parts:
        if part.filename is None:
            continue
        if part.name not in ("files", "file"):
            raise UploadInvalidError(f"unexpected file field {part.name!r}; send source files as 'files'")
        name = check_file_name(part.filename, backend)
        if name in seen:
            raise UploadInvalidError(f"file {name!r} appears twice")
        seen.add(name)
        files.append((name, _content(name, bytes(part.data))))
    if not files:
        raise UploadInvalidError("no source files: send one or more as 'files' fields")
    return UploadForm(problem, backend, files, csrf=fields.get("csrf", ""), mode=mode)


def _mode(raw: str) -> RunMode:
    if not raw:
        return RunMode.RANKED
    try:
        return RunMode(raw)
    except ValueError:
        raise UploadInvalidError(
            f"unknown mode {raw!r}; modes: {', '.join(m.value for m in RunMode)}"
        ) from None
