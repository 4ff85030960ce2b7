"""JSON-RPC edges pygls 2.1 leaves open, closed here:

- a request whose params fail to deserialize gets its error response (-32602), not silence;
- integers beyond LSP's 32-bit range (positions, versions) are clamped, so such an edit still
  applies instead of being dropped (which would leave stale text behind);
- a request before `initialize` gets -32002, a request after `shutdown` -32600 (pygls drops both
  silently: the client would wait forever); notifications then are dropped, as the spec says;
- a message with a broken `Content-Length` header does not swallow the next message (StdinFrames);
- the futures pygls leaves behind for notifications are dropped once done;
- a message that fails to deserialize is one warning line, not pygls' traceback of it; a client
  that closed its end is noted once and nothing more is sent (pygls logged a traceback per message);
- a diagnostic report or publish is written from each diagnostic's JSON, made once (convert.encoded),
  not unstructured by cattrs on every pull.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import re

from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from lsprotocol import types
from lsprotocol.types import ResponseError
from pygls.protocol.json_rpc import JsonRPCNotification, RPCRequest

from aoti_lsp.lsp.convert import report_json

log = logging.getLogger(__name__)
IGNORED = "$/aoti-lsp/rejected"
LOST_CHANGE = "$/aoti-lsp/lostChange"  # params: the uri of a document whose edit was unreadable
MAX_FRAME = 512 * 1024 * 1024  # a larger Content-Length is a broken header, not a message to wait for
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
UNSIGNED = {"line", "character"}
SERVER_NOT_INITIALIZED, INVALID_REQUEST = -32002, -32600


def clamp(value, key: str = ""):
    """`value` with every integer clamped to LSP's range (positions: 0..2^31-1)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return max(0 if key in UNSIGNED else INT_MIN, min(value, INT_MAX))
    if isinstance(value, dict):
        return {k: clamp(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [clamp(v, key) for v in value]
    return value


class _Quiet(logging.Filter):
    """pygls' records that repeat what is said here in one line: the traceback of a message that
    failed to deserialize (the "rejected malformed" warning says it), a send to a closed client."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = str(record.msg)
        return not (msg.startswith("Unable to deserialize message") or msg.startswith("Error sending data. BrokenPipeError"))


logging.getLogger("pygls.protocol.json_rpc").addFilter(_Quiet())


class Protocol(LanguageServerProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initialize_seen = False
        self.client_gone = False

    def _send_data(self, data):
        if self.client_gone:
            return
        try:
            try:
                body = _diagnostics_body(data)
            except Exception:  # never a lost report: pygls writes it the slow way
                log.exception("writing a diagnostic report failed")
                body = None
            if body is None or self.writer is None:
                super()._send_data(data)
            else:  # pygls' framing, the JSON written here (ASCII: len is the byte count)
                header = (f"Content-Length: {len(body)}\r\n"
                          f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n")
                res = self.writer.write(((header if self._include_headers else "") + body).encode(self.CHARSET))
                if inspect.isawaitable(res):
                    asyncio.ensure_future(res)
        except BrokenPipeError:  # the client left: say it once, send nothing more
            self.client_gone = True
            log.warning("the client closed the connection: nothing more is sent")
            try:  # the exit's flush of stdout must not fail on the closed pipe either
                os.dup2(os.open(os.devnull, os.O_WRONLY), getattr(self.writer, "fileno", lambda: 1)())
            except (OSError, ValueError):
                pass

    def structure_message(self, data):
        if isinstance(data, dict) and "jsonrpc" in data and "method" in data and isinstance(data.get("params"), (dict, list)):
            data = {**data, "params": clamp(data["params"])}
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            log.warning("rejected malformed %s: %s", data.get("method", "message"), exc)
            uri = _uri(data) if data.get("method") == "textDocument/didChange" else None
            if uri is not None:  # the server's copy is now stale: say so rather than keep it silently
                return JsonRPCNotification(method=LOST_CHANGE, jsonrpc="2.0", params=uri)
            return JsonRPCNotification(method=IGNORED, jsonrpc="2.0", params=None)

    def handle_message(self, message):
        method = getattr(message, "method", None)
        if method == "initialize":
            self.initialize_seen = True
        elif method is not None and method != "exit":
            refusal = None
            if not self.initialize_seen:
                refusal = (SERVER_NOT_INITIALIZED, "the server is not initialized yet: send `initialize` first")
            elif self._shutdown:
                refusal = (INVALID_REQUEST, "the server is shutting down: only `exit` is accepted")
            if refusal is not None:
                if isinstance(message, RPCRequest):
                    self._send_response(message.id, error=ResponseError(code=refusal[0], message=refusal[1]))
                return
        super().handle_message(message)
        if not isinstance(message, RPCRequest) and self._request_futures:
            # pygls keeps the future of a notification run through one of its generator handlers
            # (didOpen, didChange, didClose) under a random id and never drops it: each held its
            # result (issue 19 item 9). A done one is of no more use (a request's own callback
            # holds its future and pops it itself).
            for key, future in list(self._request_futures.items()):
                if future.done():
                    del self._request_futures[key]


def _diagnostics_body(message) -> str | None:
    """The JSON of a full diagnostic report or a publishDiagnostics, each diagnostic's JSON
    written once and reused (convert.encoded: cattrs made most of a dense file's keystroke);
    None for any other message (pygls writes it)."""
    result = getattr(message, "result", None)
    if type(result) is types.RelatedFullDocumentDiagnosticReport and not result.related_documents:
        head = {"id": message.id, "jsonrpc": message.jsonrpc, "result": {"kind": result.kind}}
        if result.result_id is not None:
            head["result"]["resultId"] = result.result_id
        return json.dumps(head)[:-2] + ', "items": ' + report_json(result.items) + "}}"
    params = getattr(message, "params", None)
    if getattr(message, "method", None) == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS and \
            type(params) is types.PublishDiagnosticsParams:
        head = {"method": message.method, "jsonrpc": message.jsonrpc, "params": {"uri": params.uri}}
        if params.version is not None:
            head["params"]["version"] = params.version
        return json.dumps(head)[:-2] + ', "diagnostics": ' + report_json(params.diagnostics) + "}}"
    return None


def _uri(data) -> str | None:
    params = data.get("params")
    doc = params.get("textDocument") if isinstance(params, dict) else None
    uri = doc.get("uri") if isinstance(doc, dict) else None
    return uri if isinstance(uri, str) else None


_HEADER = re.compile(rb"content-length:", re.IGNORECASE)


class StdinFrames:
    """stdin for pygls' reader. pygls reads header lines until a valid `Content-Length`; after
    `Content-Length: abc` it reads the unframed body and the next message's header as one line
    and loses that message. Here a header found inside a line starts the line."""

    def __init__(self, stream):
        self.stream = stream

    def readline(self) -> bytes:
        line = self.stream.readline()
        found = _HEADER.search(line, 1)
        if found and not line[: found.start()].strip().endswith(b":"):
            log.warning("skipped %d bytes of an unframed message", found.start())
            line = line[found.start():]
        if line[:15].lower() == b"content-length:":
            value = line[15:].strip()
            if value.isdigit() and int(value) > MAX_FRAME:
                log.warning("ignored a Content-Length of %s bytes", value.decode())
                return b"X-Rejected-Content-Length: %s\r\n" % value
            line = b"Content-Length:" + line[15:]  # pygls matches the exact spelling
        return line

    def read(self, n: int) -> bytes:
        return self.stream.read(n)
