"""pygls 2.1 answers a request whose params fail to deserialize with only a showMessage,
never a response: the client then waits forever. Here such a request gets its JSON-RPC
error response (-32602 Invalid Params), and the server carries on."""

from __future__ import annotations

import logging

from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification

log = logging.getLogger(__name__)
IGNORED = "$/aoti-lsp/rejected"


class Protocol(LanguageServerProtocol):
    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            log.warning("rejected malformed %s: %s", data.get("method", "message"), exc)
            return JsonRPCNotification(method=IGNORED, jsonrpc="2.0", params=None)
