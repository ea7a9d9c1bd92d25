"""Drives the acc kernel through jupyter_client, as JupyterLab does, and checks every answer.

Run by repl/tests/jupyter.rs: `python3 drive_kernel.py` with JUPYTER_PATH naming the folder
where `acc jupyter install --prefix` wrote the kernelspec `acc`. Each check prints a line; the
first that fails ends the script with status 1 and says what came instead.
"""

import os
import queue
import sys
import time

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

TIMEOUT = 60


class Failed(Exception):
    pass


def check(condition, what, got=None):
    if not condition:
        raise Failed(f"{what}\n  got: {got!r}")
    print(f"ok: {what}", flush=True)


def collect(kc, msg_id):
    """The iopub messages of request `msg_id`, up to its `idle` status."""
    outputs = []
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            return outputs
        if kind != "status":
            outputs.append((kind, content))
    raise Failed(f"no idle status for request {msg_id} within {TIMEOUT} s: {outputs!r}")


def shell_reply(kc, msg_id):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            msg = kc.get_shell_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg
    raise Failed(f"no shell reply to {msg_id} within {TIMEOUT} s")


def execute(kc, code):
    """Runs `code`: (the execute_reply's content, the iopub outputs)."""
    msg_id = kc.execute(code)
    reply = shell_reply(kc, msg_id)
    return reply["content"], collect(kc, msg_id)


def of_kind(outputs, kind):
    return [content for k, content in outputs if k == kind]


def stdout(outputs):
    return "".join(c["text"] for c in of_kind(outputs, "stream") if c["name"] == "stdout")


def result(outputs):
    results = of_kind(outputs, "execute_result")
    return results[0]["data"]["text/plain"] if len(results) == 1 else results


def main():
    kernels = KernelSpecManager().find_kernel_specs()
    check("acc" in kernels, "the kernelspec acc is installed", kernels)
    spec = KernelSpecManager().get_kernel_spec("acc")
    check(spec.language == "acc" and spec.argv[1:3] == ["jupyter", "kernel"],
          "the kernelspec starts `acc jupyter kernel`", spec.argv)

    km = KernelManager(kernel_name="acc")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=TIMEOUT)
        drive(km, kc)
    finally:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)


def drive(km, kc):
    msg_id = kc.kernel_info()
    info = shell_reply(kc, msg_id)["content"]
    collect(kc, msg_id)
    language = info["language_info"]
    check(info["status"] == "ok" and info["protocol_version"].startswith("5."),
          "kernel_info: status ok, protocol 5", info)
    check((language["name"], language["file_extension"], language["mimetype"])
          == ("acc", ".acc", "text/x-acc"), "kernel_info: the language is acc", language)

    reply, outputs = execute(kc, 'print("hello from acc")')
    check(reply["status"] == "ok", "print: execute_reply ok", reply)
    check(of_kind(outputs, "execute_input")[0]["code"] == 'print("hello from acc")',
          "print: execute_input echoes the code", outputs)
    check(stdout(outputs) == "hello from acc\n", "print: the output is a stream message", outputs)
    check(of_kind(outputs, "execute_result") == [], "print: no execute_result", outputs)
    count = reply["execution_count"]

    reply, outputs = execute(kc, "let answer = 6 * 7\nanswer")
    check(result(outputs) == "42", "a cell's last expression is its execute_result", outputs)
    check(stdout(outputs) == "", "the value is not also printed", outputs)
    check(reply["execution_count"] == count + 1, "the execution count goes up", reply)
    check(of_kind(outputs, "execute_result")[0]["execution_count"] == count + 1,
          "the execute_result carries the execution count", outputs)

    reply, outputs = execute(kc, "answer + 1")
    check(result(outputs) == "43", "a variable is carried to the next cell", outputs)

    reply, outputs = execute(kc, "zeros(2, 2)")
    check(result(outputs) == "[[0.0, 0.0],\n [0.0, 0.0]]", "an array shows as the REPL shows it",
          outputs)

    reply, outputs = execute(
        kc, 'fn noisy() -> i64 {\n    print("working")\n    return 5\n}\nnoisy()')
    check(stdout(outputs) == "working\n" and result(outputs) == "5",
          "what the last expression prints is output, its value the result", outputs)

    reply, outputs = execute(kc, "let fine = 1\nprint(undefined_name)")
    errors = of_kind(outputs, "error")
    check(reply["status"] == "error" and reply["ename"] == "CompileError",
          "a compile error: execute_reply status error", reply)
    check(len(errors) == 1 and "undefined_name" in errors[0]["evalue"],
          "a compile error: an error message naming the name", errors)
    traceback = "\n".join(errors[0]["traceback"])
    check(f"<cell:{reply['execution_count']}>:2:7" in traceback,
          "a compile error: the traceback is the diagnostic at the cell's line:col", traceback)
    check("\x1b[" not in traceback, "a compile error: no terminal colours", traceback)
    reply, outputs = execute(kc, "answer")
    check(reply["status"] == "ok" and result(outputs) == "42",
          "the kernel survives an error, the session intact", outputs)
    reply, outputs = execute(kc, "fine")
    check(reply["status"] == "error", "a cell that failed to compile declared nothing", reply)


    # A picture without a file name shows inline as image/png (and no file is written).
    reply, outputs = execute(kc, "let g = zeros(3, 4)\ng[1, 2] = 1.0\nimshow(g)")
    pictures = [m for m in of_kind(outputs, "display_data") if "image/png" in m["data"]]
    check(reply["status"] == "ok" and len(pictures) == 1, "imshow: one image/png display", outputs)
    png = __import__("base64").b64decode(pictures[0]["data"]["image/png"]) if pictures else b""
    check(png[:8] == b"\x89PNG\r\n\x1a\n", "imshow: the data is a PNG", png[:16])
    check(not __import__("os").path.exists("acc-plot-1.png"), "imshow: no file is written")
    reply, outputs = execute(kc, ":vars")
    tables = of_kind(outputs, "display_data")
    check(len(tables) == 1 and "<table>" in tables[0]["data"]["text/html"]
          and "answer" in tables[0]["data"]["text/plain"],
          ":vars shows an HTML table with text beside it", outputs)

    reply, outputs = execute(kc, ":time let s = 0\nfor i in 0..1000 { s += i }")
    tables = of_kind(outputs, "display_data")
    check(reply["status"] == "ok" and len(tables) == 1
          and "<th>wall</th>" in tables[0]["data"]["text/html"],
          ":time reports as an HTML table", outputs)

    reply, outputs = execute(kc, ":profile on")
    reply, outputs = execute(
        kc, ":device emulated")
    reply, outputs = execute(
        kc, "let v = zeros(64)\nacc parallel loop copy(v)\nfor i in 0..64 { v[i] = 2.0 }")
    reply, outputs = execute(kc, ":profile")
    tables = of_kind(outputs, "display_data")
    check(len(tables) == 1 and "parallel loop" in tables[0]["data"]["text/html"]
          and "acc profile" in tables[0]["data"]["text/plain"],
          ":profile shows the report as an HTML table, the text report beside it", outputs)
    execute(kc, ":profile off")

    reply, outputs = execute(kc, ":help")
    check(":vars" in stdout(outputs), ":help is output text", outputs)

    code = "let total = 0\nans"
    msg_id = kc.complete(code, len(code))
    completion = shell_reply(kc, msg_id)["content"]
    collect(kc, msg_id)
    check("answer" in completion["matches"], "complete_request: a partial name completes",
          completion)
    check((completion["cursor_start"], completion["cursor_end"]) == (len(code) - 3, len(code)),
          "complete_request: the range replaced is the partial name", completion)

    code = ":pro"
    msg_id = kc.complete(code, len(code))
    completion = shell_reply(kc, msg_id)["content"]
    collect(kc, msg_id)
    check(completion["matches"] == [":profile"], "complete_request: commands complete",
          completion)

    code = "let é = sqrt(answer)"
    msg_id = kc.inspect(code, code.index("answer") + 2)
    about = shell_reply(kc, msg_id)["content"]
    collect(kc, msg_id)
    check(about["found"] and about["data"]["text/plain"] == "answer: i64",
          "inspect_request: a variable's type (positions in characters)", about)
    msg_id = kc.inspect("sqrt(", 5)
    about = shell_reply(kc, msg_id)["content"]
    collect(kc, msg_id)
    check(about["found"] and "sqrt(x: F) -> F" in about["data"]["text/plain"],
          "inspect_request: the signature of the call the cursor is in", about)

    for code, status in [("let s = 1 +", "incomplete"), ("for i in 0..3 {", "incomplete"),
                         ("let s = 1", "complete")]:
        msg_id = kc.is_complete(code)
        reply = shell_reply(kc, msg_id)["content"]
        collect(kc, msg_id)
        check(reply["status"] == status, f"is_complete_request: {code!r} is {status}", reply)

    msg_id = kc.comm_info()
    reply = shell_reply(kc, msg_id)["content"]
    collect(kc, msg_id)
    check(reply["status"] == "ok" and reply["comms"] == {}, "comm_info_request: no comms", reply)

    # A message with a bad signature is logged and skipped.
    kc.shell_channel.socket.send_multipart(
        [b"<IDS|MSG>", b"0" * 64, b"{}", b"{}", b"{}", b"{}"])
    # So are a request whose content does not fit its type and a type no kernel knows.
    kc.session.send(kc.shell_channel.socket, "execute_request", {"silent": "yes"})
    kc.session.send(kc.shell_channel.socket, "frobnicate_request", {})
    msg_id = kc.kernel_info()
    shell_reply(kc, msg_id)
    collect(kc, msg_id)
    check(km.is_alive(), "bad messages (signature, content, type) leave the kernel answering")

    interrupt(km, kc, lambda: km.interrupt_kernel(), "SIGINT (km.interrupt_kernel)")
    interrupt(km, kc, lambda: kc.control_channel.send(kc.session.msg("interrupt_request", {})),
              "interrupt_request on the control channel")

    msg_id = kc.shutdown()
    deadline = time.monotonic() + TIMEOUT
    reply = None
    while reply is None and time.monotonic() < deadline:
        try:
            msg = kc.control_channel.get_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["msg_type"] == "shutdown_reply":
            reply = msg["content"]
    check(reply is not None and reply["status"] == "ok", "shutdown_request: shutdown_reply ok",
          reply)
    deadline = time.monotonic() + 20
    while km.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    check(not km.is_alive(), "shutdown_request: the kernel ends by itself")
    code = km.provisioner.process.poll() if km.provisioner and km.provisioner.process else 0
    check(code == 0, "shutdown_request: the kernel exits with status 0", code)


def interrupt(km, kc, send_interrupt, how):
    msg_id = kc.execute("let spins = 0\nwhile true { spins += 1 }")
    # The cell is running once its execute_input is out and a moment has passed.
    deadline = time.monotonic() + TIMEOUT
    started = False
    while not started and time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        started = (msg["parent_header"].get("msg_id") == msg_id
                   and msg["msg_type"] == "execute_input")
    time.sleep(0.5)
    send_interrupt()
    reply = shell_reply(kc, msg_id)["content"]
    outputs = collect(kc, msg_id)
    errors = of_kind(outputs, "error")
    text = " ".join([reply.get("ename", ""), reply.get("evalue", "")]
                    + reply.get("traceback", [])).lower()
    check(reply["status"] == "error" and "interrupt" in text,
          f"{how} stops a running cell with an error that says so", reply)
    check(len(errors) == 1, f"{how}: an error message on iopub", outputs)
    reply, outputs = execute(kc, "answer")
    check(reply["status"] == "ok" and result(outputs) == "42",
          f"{how}: the next cell runs in the same session", outputs)
    reply, outputs = execute(kc, "spins > 0")
    check(result(outputs) == "true", f"{how}: the interrupted cell's work is kept", outputs)


if __name__ == "__main__":
    try:
        main()
    except Failed as e:
        print(f"FAILED: {e}", flush=True)
        sys.exit(1)
    print("all checks passed", flush=True)
