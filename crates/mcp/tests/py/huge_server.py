"""A raw stdio MCP server (no SDK) that answers with frames far larger than
any cap: a 100 MB text result, a large base64 image, a result whose JSON
structure alone is huge, a 10 MiB tool description, and a small result to
show the session survives. Every large frame is streamed in 1 MiB chunks so
the server itself stays small."""

import json
import sys

MIB = 1024 * 1024
out = sys.stdout


def send(obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()


def stream_string_result(req_id, prefix, total, suffix, fill="x"):
    # prefix + <total bytes of fill> + suffix, without building it in memory.
    out.write('{"jsonrpc": "2.0", "id": %s, "result": %s' % (json.dumps(req_id), prefix))
    chunk = fill * MIB
    left = total
    while left > 0:
        n = min(left, MIB)
        out.write(chunk[:n])
        left -= n
    out.write(suffix + "}\n")
    out.flush()


TOOLS = [
    {"name": "small", "description": "a small answer", "inputSchema": {"type": "object"}},
    {"name": "huge_text", "description": "d" * (10 * MIB), "inputSchema": {"type": "object"}},
    {"name": "huge_image", "description": "an image", "inputSchema": {"type": "object"}},
    {"name": "huge_structure", "description": "numbers", "inputSchema": {"type": "object"}},
]

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method = msg.get("method")
    req_id = msg.get("id")
    if req_id is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": req_id, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "huge", "version": "1"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": req_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        mb = int((msg["params"].get("arguments") or {}).get("mb", 100))
        if name == "small":
            send({"jsonrpc": "2.0", "id": req_id, "result": {"content": [{"type": "text", "text": "ok"}]}})
        elif name == "huge_text":
            stream_string_result(req_id, '{"content": [{"type": "text", "text": "', mb * MIB, '"}]}')
        elif name == "huge_image":
            stream_string_result(req_id, '{"content": [{"type": "image", "mimeType": "image/png", "data": "', mb * MIB, '"}]}', fill="A")
        elif name == "huge_structure":
            out.write('{"jsonrpc": "2.0", "id": %s, "result": {"content": [], "structuredContent": {"n": [' % json.dumps(req_id))
            row = ",".join(["1"] * (MIB // 2))
            for i in range(mb):
                out.write(("," if i else "") + row)
            out.write("]}}}\n")
            out.flush()
        else:
            send({"jsonrpc": "2.0", "id": req_id, "error": {"code": -32601, "message": "no such tool"}})
    else:
        send({"jsonrpc": "2.0", "id": req_id, "result": {}})
