"""One example per row of every source's mapping table (the adapters' ``MAPPING``,
from which docs/mapping.md is made), in the style of sqlglot's round-trip tables:
records in, the output lines' fields out. Every row has an example, and every
example names a row, so the table and the code cannot drift apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT
from helpers import convert_bytes, convert_session_files, lines_of

from streamv1.translator.reading import mapping
from streamv1.translator.reading.sources import sources

S = "0b6a3c9e-1111-4222-8333-944455556666"
T0 = "2026-12-01T10:00:00.000Z"
_clock = iter(range(1, 3600))


def ts() -> str:
    """An ever later time between 10:00 and 11:00 (the fork example steps past it)."""
    n = next(_clock)
    return f"2026-12-01T10:{n // 60:02d}:{n % 60:02d}.000Z"


# -- claude-session records ------------------------------------------------------


def prompt(text: Any, **kw: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": S,
        "uuid": kw.pop("uuid", f"u-{text!s:.8}"),
        "parentUuid": kw.pop("parentUuid", None),
        "timestamp": kw.pop("timestamp", ts()),
        "cwd": "/p",
        "message": {"role": "user", "content": text},
        **kw,
    }


def reply(
    mid: str,
    *blocks: dict[str, Any],
    stop: str | None = "end_turn",
    out: int = 5,
    model: str = "claude-x",
    **kw: Any,
) -> dict[str, Any]:
    return {
        "type": "assistant",
        "sessionId": S,
        "uuid": kw.pop("uuid", f"a-{mid}"),
        "parentUuid": kw.pop("parentUuid", None),
        "timestamp": ts(),
        "requestId": "r-" + mid,
        "message": {
            "id": mid,
            "role": "assistant",
            "model": model,
            "content": list(blocks),
            "stop_reason": stop,
            "usage": {
                "input_tokens": 1,
                "output_tokens": out,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        },
        **kw,
    }


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool(tid: str, name: str = "Bash", **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def result_of(tid: str, content: Any = "ok", **kw: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": S,
        "uuid": kw.pop("uuid", f"r-{tid}"),
        "parentUuid": kw.pop("parentUuid", None),
        "timestamp": ts(),
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tid, "content": content}],
        },
        "toolUseResult": {"stdout": content},
        **kw,
    }


def user_text(t: str, **kw: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": S,
        "timestamp": ts(),
        "message": {"role": "user", "content": t},
        **kw,
    }


def cost(total: float) -> dict[str, Any]:
    return {"type": "cost-state", "sessionId": S, "totalCostUSD": total}


def attachment(kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "attachment",
        "sessionId": S,
        "timestamp": ts(),
        "attachment": {"type": kind, **fields},
    }


def system(subtype: str | None, **kw: Any) -> dict[str, Any]:
    rec = {"type": "system", "sessionId": S, "timestamp": ts(), **kw}
    if subtype is not None:
        rec["subtype"] = subtype
    return rec


def kinds(*pairs: str) -> list[dict[str, Any]]:
    """Expected lines given as 'type' or 'type/subtype' only."""
    out = []
    for pair in pairs:
        kind, _, sub = pair.partition("/")
        out.append({"type": kind, **({"subtype": sub} if sub else {})})
    return out


SESSION: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "prompt": (
        [prompt("hi"), reply("m1", text("hello"))],
        [
            {
                "type": "system",
                "subtype": "init",
                "extension.prompt": "hi",
                "cwd": "/p",
                "agent.model": None,
            },
            {"type": "assistant", "message.content": [text("hello")]},
            {"type": "result", "subtype": "success", "num_turns": 1, "result": "hello"},
        ],
    ),
    "command": (
        [prompt("<command-name>/review</command-name>"), reply("m1", text("done"))],
        [
            {"subtype": "init", "extension.prompt": "<command-name>/review</command-name>"},
            {"type": "assistant"},
            {"type": "result", "num_turns": 1},
        ],
    ),
    "tool_result": (
        [
            prompt("run"),
            reply("m1", tool("t1", command="ls"), stop="tool_use"),
            result_of("t1", "a b"),
            reply("m2", text("two files")),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {
                "type": "user",
                "message.content.0.tool_use_id": "t1",
                "tool_use_result": {"stdout": "a b"},
            },
            {"type": "assistant"},
            {
                "type": "result",
                "num_turns": 2,
                "is_error": False,
                "result": "two files",
                "usage.output_tokens": 10,
            },
        ],
    ),
    "interrupt": (
        [
            prompt("go"),
            reply("m1", text("thinking about it"), stop=None),
            user_text("[Request interrupted by user]"),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {
                "type": "result",
                "subtype": "interrupted",
                "is_error": True,
                "extension.interrupt": "[Request interrupted by user]",
            },
        ],
    ),
    "tool_interrupt": (
        [
            prompt("go"),
            reply("m1", tool("t1"), stop="tool_use"),
            result_of("t1", "The user doesn't want to proceed with this tool use."),
            user_text("[Request interrupted by user for tool use]"),
            cost(0.2),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "user"},
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "result": None,
                "num_turns": 3,
                "extension.interrupt": "[Request interrupted by user for tool use]",
            },
        ],
    ),
    "unfinished": (
        [
            prompt("search"),
            reply("m1", text("Searching."), stop="pause_turn"),
            reply(
                "m1",
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                stop="pause_turn",
            ),
            cost(0.1),
            prompt("again"),
            cost(0.2),
            # a server tool's result as the last block: an error even on end_turn
            prompt("find"),
            reply(
                "m3",
                {"type": "server_tool_use", "id": "s3", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "s3", "content": []},
            ),
            cost(0.3),
            # thinking as the last word of a pause_turn: success, the result ""
            prompt("think"),
            reply(
                "m4", {"type": "thinking", "thinking": "hmm", "signature": "x"}, stop="pause_turn"
            ),
            cost(0.4),
        ],
        [
            *kinds("system/init", "assistant", "assistant"),
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "result": None,
            },
            {"subtype": "init"},
            {"type": "result", "subtype": "error_during_execution", "usage": None},
            *kinds("system/init", "assistant"),
            {"type": "result", "subtype": "error_during_execution", "is_error": True},
            *kinds("system/init", "assistant"),
            {"type": "result", "subtype": "success", "is_error": False, "result": ""},
        ],
    ),
    "local_output": (
        [
            prompt("<command-name>/cost</command-name>"),
            user_text("<local-command-stdout>Total cost: $0</local-command-stdout>"),
            cost(0.5),
        ],
        [
            {"subtype": "init"},
            {
                "type": "user",
                "message.content": [
                    text("<local-command-stdout>Total cost: $0</local-command-stdout>")
                ],
            },
            {
                "type": "result",
                "subtype": "success",
                "num_turns": 0,
                "usage.input_tokens": 0,
                "total_cost_usd": 0.5,
            },
        ],
    ),
    "compact_summary": (
        [
            system("compact_boundary", content="Conversation compacted"),
            user_text("Summary: we ran ls.", isCompactSummary=True),
            prompt("<command-name>/compact</command-name>"),
            user_text("<local-command-stdout>Compacted </local-command-stdout>"),
            cost(1.0),
        ],
        [
            {"subtype": "init"},
            {"type": "system", "subtype": "compact_boundary"},
            {
                "type": "user",
                "message.content": [text("Summary: we ran ls.")],
                "extension.isCompactSummary": True,
            },
            {"type": "user"},
            {"type": "result", "num_turns": 0},
        ],
    ),
    "meta_injected": (
        [
            prompt("essay"),
            reply("m1", text("The sea is"), stop="max_tokens"),
            user_text("Output token limit hit. Resume directly.", isMeta=True),
            reply("m2", text(" vast.")),
            cost(0.1),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {
                "type": "user",
                "message.content": [text("Output token limit hit. Resume directly.")],
                "extension.isMeta": True,
            },
            {"type": "assistant"},
            {"type": "result", "num_turns": 2, "result": " vast."},
        ],
    ),
    "meta_context": (
        [
            prompt("a"),
            reply("m1", text("b")),
            user_text("<system-reminder>x</system-reminder>", isMeta=True),
            prompt("c"),
            reply("m2", text("d")),
        ],
        [
            *kinds("system/init", "assistant"),
            {"type": "result", "num_turns": 1, "extension.dropped": {"user/isMeta": 1}},
            *kinds("system/init", "assistant"),
            {"type": "result", "num_turns": 1},
        ],
    ),
    "assistant": (
        [
            prompt("search"),
            reply(
                "m1",
                {
                    "type": "server_tool_use",
                    "id": "srv1",
                    "name": "web_search",
                    "input": {"query": "q"},
                },
                {"type": "web_search_tool_result", "tool_use_id": "srv1", "content": []},
                {"type": "text", "text": "Found.", "citations": [{"type": "x"}]},
                {"type": "redacted_thinking", "data": "abc"},
            ),
        ],
        [
            {"subtype": "init"},
            {
                "type": "assistant",
                "message.content.0.type": "server_tool_use",
                "message.content.1.type": "web_search_tool_result",
                "message.content.2.extension.citations": [{"type": "x"}],
                "message.content.3.type": "redacted_thinking",
                "extension.message.model": "claude-x",
                "extension.requestId": "r-m1",
            },
            {"type": "result", "result": "Found."},
        ],
    ),
    "api_error": (
        [
            prompt("hi"),
            reply(
                "e1",
                text("API Error: 500 boom"),
                stop="stop_sequence",
                model="<synthetic>",
                isApiErrorMessage=True,
                error="unknown",
            ),
            cost(0),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {
                "type": "result",
                "subtype": "success",
                "is_error": True,
                "result": "API Error: 500 boom",
                "usage.output_tokens": 0,
            },
        ],
    ),
    "turn_duration": (
        [prompt("hi"), reply("m1", text("yo")), system("turn_duration", durationMs=1234)],
        [*kinds("system/init", "assistant"), {"type": "result", "duration_ms": 1234}],
    ),
    "cost_state": (
        [prompt("hi"), reply("m1", text("yo")), cost(0.25), cost(0.25)],
        [
            *kinds("system/init", "assistant"),
            {"type": "result", "total_cost_usd": 0.25, "extension.cost_state.totalCostUSD": 0.25},
        ],
    ),
    "unanswered": (
        [prompt("go"), reply("m1", tool("t1"), stop="tool_use"), cost(0.1)],
        [
            *kinds("system/init", "assistant"),
            {"type": "result", "subtype": "error_during_execution", "is_error": True},
        ],
    ),
    "max_turns": (
        [
            prompt("go"),
            reply("m1", tool("t1"), stop="tool_use"),
            result_of("t1"),
            attachment("max_turns_reached", turnCount=1),
            cost(0.1),
        ],
        [
            *kinds("system/init", "assistant", "user"),
            {"type": "result", "subtype": "error_max_turns", "is_error": True, "num_turns": 1},
        ],
    ),
    "budget": (
        [
            cost(0.5),
            prompt("go"),
            attachment("budget_usd", used=0, total=0.001, remaining=0.001),
            reply("m1", tool("t1"), stop="tool_use"),
            cost(0.6),
        ],
        [
            *kinds("system/init", "assistant"),
            {"type": "result", "subtype": "error_max_budget_usd", "is_error": True, "result": None},
        ],
    ),
    "structured": (
        [
            prompt("capital?"),
            reply("m1", tool("t1", "StructuredOutput", city="Paris"), stop="tool_use"),
            result_of("t1", "Structured output provided successfully"),
            attachment("structured_output", data={"city": "Paris"}, toolUseID="t1"),
            cost(0.1),
        ],
        [
            *kinds("system/init", "assistant", "user"),
            {
                "type": "result",
                "subtype": "success",
                "result": '{"city":"Paris"}',
                "num_turns": 2,
                "extension.structured_output": {"city": "Paris"},
            },
        ],
    ),
    "sidechain": (
        [
            prompt("use an agent", uuid="p0", isSidechain=False),
            reply(
                "m1",
                tool("t1", "Task", prompt="count files"),
                stop="tool_use",
                uuid="a1",
                isSidechain=False,
            ),
            prompt("count files", uuid="s0", isSidechain=True),
            reply("m2", text("3 files"), uuid="s1", parentUuid="s0", isSidechain=True, out=7),
            result_of("t1", "3 files", isSidechain=False),
            reply("m3", text("There are 3."), isSidechain=False),
        ],
        [
            {"subtype": "init", "parent_tool_use_id": None},
            {"type": "assistant"},
            {
                "subtype": "task_started",
                "parent_tool_use_id": None,
                "seq": 2,
                "task.tool_use_id": "t1",
                "task.subagent_type": "subagent",
                "task.prompt": "count files",
            },
            {"type": "assistant", "parent_tool_use_id": "t1", "seq": 3},
            {"subtype": "task_notification", "task.tool_use_id": "t1", "status": None},
            {"type": "user", "parent_tool_use_id": None},
            {"type": "assistant"},
            {
                "type": "result",
                "parent_tool_use_id": None,
                "usage.output_tokens": 10,
                "model_usage.claude-x.output_tokens": 17,
                "num_turns": 2,
                "result": "There are 3.",
            },
        ],
    ),
    "agent_done": (
        [
            prompt("use an agent"),
            reply("m1", tool("t1", "Agent", prompt="count"), stop="tool_use"),
            result_of(
                "t1",
                "3 files",
                toolUseResult={
                    "status": "completed",
                    "agentId": "ab12",
                    "totalTokens": 120,
                    "totalToolUseCount": 1,
                    "totalDurationMs": 40,
                    "content": [
                        {"type": "text", "text": "note"},
                        {"type": "text", "text": "3 files"},
                    ],
                },
            ),
            reply("m2", text("There are 3.")),
        ],
        [
            *kinds("system/init", "assistant"),
            {
                "subtype": "task_notification",
                "task_id": "ab12",
                "status": "completed",
                "task.tool_use_id": "t1",
                "task.summary": "3 files",
                "task.usage.total_tokens": 120,
                "task.usage.tool_uses": 1,
                "task.usage.duration_ms": 40,
            },
            {"type": "user", "tool_use_result.agentId": "ab12"},
            {"type": "assistant"},
            {"type": "result", "subtype": "success"},
        ],
    ),
    "task_notification": (
        [
            prompt("start a background agent"),
            reply("m1", text("started")),
            user_text(
                "<task-notification>\n<task-id>ab12</task-id>\n<tool-use-id>t1</tool-use-id>"
                '\n<status>completed</status>\n<summary>Agent "x" finished</summary>\n'
                "<result>3 files</result>\n<usage><subagent_tokens>120</subagent_tokens>"
                "<tool_uses>1</tool_uses><duration_ms>40</duration_ms></usage>\n"
                "</task-notification>"
            ),
            reply("m2", text("It found 3.")),
        ],
        [
            *kinds("system/init", "assistant"),
            {
                "subtype": "task_notification",
                "task_id": "ab12",
                "status": "completed",
                "task.tool_use_id": "t1",
                "task.summary": "3 files",
                "task.usage.total_tokens": 120,
                "task.title": 'Agent "x" finished',
            },
            {"type": "result", "subtype": "success", "result": "started"},
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "result", "result": "It found 3."},
        ],
    ),
    "background": (
        [
            prompt("count in the background"),
            reply(
                "m1", tool("t1", "Agent", prompt="count", run_in_background=True), stop="tool_use"
            ),
            result_of(
                "t1",
                "Async agent launched",
                toolUseResult={"isAsync": True, "status": "async_launched", "agentId": "ab12"},
            ),
            reply("m2", text("Started it.")),
            system("turn_duration", durationMs=900),
            user_text(
                "<task-notification>\n<task-id>ab12</task-id>\n<tool-use-id>t1</tool-use-id>"
                "\n<status>completed</status>\n<result>3</result>\n</task-notification>"
            ),
            reply("m3", text("It found 3.")),
        ],
        [
            *kinds("system/init", "assistant", "user", "assistant"),
            {"subtype": "task_notification", "task_id": "ab12", "task.tool_use_id": "t1"},
            {"type": "result", "subtype": "success", "duration_ms": 900, "result": "Started it."},
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "result", "result": "It found 3."},
        ],
    ),
    "agent_file": (
        [
            prompt("count files", isSidechain=True, agentId="abc"),
            reply("m1", text("3"), isSidechain=True, agentId="abc"),
        ],
        [
            {"subtype": "init", "agent.role": "subagent"},
            {"type": "assistant"},
            {"type": "result", "usage.output_tokens": 5},
        ],
    ),
    "unspawned_agent": (
        [
            prompt("Warmup", isSidechain=True, agentId="abc"),
            reply("m1", text("OK"), isSidechain=True, agentId="abc"),
        ],
        # its session file (written beside it by the test) spawned no agent: only
        # the count, in the framer's synthetic run for lines outside any run
        [
            {"subtype": "init", "extension.synthetic": True},
            {"type": "result", "extension.dropped": {"agent/unspawned": 1}},
        ],
    ),
    # Capture ours/x_background_together: the agent's file begins before its launch's
    # tool result is written; that answer is not its end (no task_notification there).
    "background_agent_file": (
        {
            f"{S}.jsonl": [
                prompt("start it", timestamp="2026-12-01T09:00:00.000Z"),
                reply("b1", tool("tb", "Agent", prompt="bg"), stop="tool_use"),
                {
                    **result_of("tb", "Async agent launched", timestamp="2026-12-01T09:30:00.000Z"),
                    "toolUseResult": {"status": "async_launched", "agentId": "ab"},
                },
                reply("b2", text("started")),
                prompt(
                    "<task-notification>\n<task-id>ab</task-id>\n<tool-use-id>tb</tool-use-id>"
                    "\n<status>completed</status>\n</task-notification>",
                    timestamp="2026-12-01T11:00:00.000Z",
                ),
                reply("b3", text("it reported")),
            ],
            f"{S}/subagents/agent-ab.jsonl": [
                prompt("bg", isSidechain=True, agentId="ab", timestamp="2026-12-01T09:10:00.000Z"),
                reply("c1", text("bg done"), isSidechain=True, agentId="ab"),
            ],
            f"{S}/subagents/agent-ab.meta.json": {
                "agentType": "general-purpose",
                "toolUseId": "tb",
                "requestShape": "background",
            },
        },
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {"subtype": "task_started", "task_id": "ab", "task.is_backgrounded": True},
            {"type": "user", "parent_tool_use_id": None},
            {"type": "assistant", "parent_tool_use_id": None},
            {"type": "assistant", "parent_tool_use_id": "tb"},
            {"subtype": "task_notification", "task_id": "ab", "status": "completed"},
            {"type": "result", "result": "started"},
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "result", "result": "it reported"},
        ],
    ),
    # A session's files, by path under the project folder: the main file launches a
    # workflow (Workflow, async_launched, runId wf_1) whose agent file is linked by
    # its folder's name, and nested under that call (capture ours/x_workflow).
    "workflow_agent": (
        {
            f"{S}.jsonl": [
                prompt("run a workflow", timestamp="2026-12-01T09:00:00.000Z"),
                reply("w1", tool("tw", "Workflow", script="..."), stop="tool_use"),
                {
                    **result_of("tw", "Workflow launched in background."),
                    "toolUseResult": {
                        "status": "async_launched",
                        "taskId": "t1",
                        "taskType": "local_workflow",
                        "runId": "wf_1",
                    },
                },
                reply("w2", text("launched")),
                prompt(
                    "<task-notification>\n<task-id>t1</task-id>\n<tool-use-id>tw</tool-use-id>"
                    "\n<status>completed</status>\n</task-notification>",
                    timestamp="2026-12-01T11:00:00.000Z",
                ),
                reply("w3", text("done")),
            ],
            f"{S}/subagents/workflows/wf_1/agent-a1.jsonl": [
                prompt(
                    "job A", isSidechain=True, agentId="a1", timestamp="2026-12-01T10:30:00.000Z"
                ),
                reply("j1", text("A done"), isSidechain=True, agentId="a1"),
            ],
            f"{S}/subagents/workflows/wf_1/agent-a1.meta.json": {
                "agentType": "workflow-subagent",
                "description": "job:A",
                "inWorkflowRun": True,
            },
        },
        [
            {"subtype": "init"},
            {"type": "assistant", "message.content.0.name": "Workflow"},
            {"type": "user", "parent_tool_use_id": None},
            {"type": "assistant", "parent_tool_use_id": None},
            {
                "subtype": "task_started",
                "task_id": "a1",
                "task.tool_use_id": "tw",
                "task.subagent_type": "workflow-subagent",
            },
            {"type": "assistant", "parent_tool_use_id": "tw"},
            {"subtype": "task_notification", "task_id": "t1"},
            {"type": "result", "result": "launched"},
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "result", "result": "done"},
        ],
    ),
    # A 2.1.29 TUI session (capture ours/x_prompt_suggestion_tui): the reply of the
    # second turn is written to the prompt suggestion's file, before its prompt; the
    # main file's next record names it as parentUuid. The suggestion's own reply is a
    # side call: no line, its tokens in the open run's model_usage.
    "side_call_file": (
        {
            f"{S}.jsonl": [
                prompt("first", uuid="p1", timestamp="2026-12-01T09:00:00.000Z"),
                reply("s1", text("one"), uuid="a1", parentUuid="p1"),
                prompt("second", uuid="p2", parentUuid="a1", timestamp="2026-12-01T09:00:05.000Z"),
                prompt("third", uuid="p3", parentUuid="a2", timestamp="2026-12-01T11:00:00.000Z"),
                reply("s3", text("three"), uuid="a3", parentUuid="p3"),
            ],
            f"{S}/subagents/agent-aprompt_suggestion-1a2b3c.jsonl": [
                reply(
                    "s2",
                    text("two"),
                    uuid="a2",
                    parentUuid="p2",
                    isSidechain=True,
                    agentId="aprompt_suggestion-1a2b3c",
                ),
                prompt(
                    "[SUGGESTION MODE: ...]",
                    uuid="q1",
                    parentUuid="a2",
                    isSidechain=True,
                    agentId="aprompt_suggestion-1a2b3c",
                ),
                reply(
                    "q1",
                    text("run the tests"),
                    out=7,
                    model="claude-y",
                    uuid="q2",
                    parentUuid="q1",
                    isSidechain=True,
                    agentId="aprompt_suggestion-1a2b3c",
                ),
            ],
        },
        [
            {"subtype": "init"},
            {"type": "assistant", "message.content.0.text": "one"},
            {"type": "result", "result": "one"},
            {"subtype": "init"},
            {"type": "assistant", "message.content.0.text": "two", "agent": "primary"},
            {
                "type": "result",
                "subtype": "success",
                "result": "two",
                "usage.output_tokens": 5,
                "model_usage.claude-y.output_tokens": 7,
                "extension.dropped.side_call/prompt_suggestion": 2,
            },
            {"subtype": "init"},
            {"type": "assistant", "message.content.0.text": "three"},
            {"type": "result", "result": "three"},
        ],
    ),
    # Capture ours/x_background_busy: two notifications handed over inside a busy turn.
    "queued_notification": (
        [
            prompt("go"),
            reply("q1", tool("tb", "Agent", prompt="bg"), stop="tool_use"),
            {
                **result_of("tb", "Async agent launched"),
                "toolUseResult": {"status": "async_launched", "agentId": "ab"},
            },
            reply("q2", tool("ts", "Bash", command="sleep 5"), stop="tool_use"),
            result_of("ts", "done"),
            {
                "type": "attachment",
                "sessionId": S,
                "uuid": "qc",
                "timestamp": ts(),
                "attachment": {
                    "type": "queued_command",
                    "commandMode": "task-notification",
                    "prompt": "<task-notification>\n<task-id>ab</task-id>\n<tool-use-id>tb"
                    "</tool-use-id>\n<status>completed</status>\n<result>bg done</result>\n"
                    "</task-notification>",
                },
            },
            reply("q3", text("bg reported")),
            {"type": "cost-state", "sessionId": S, "totalCostUSD": 0.5},
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "user"},
            {"type": "assistant"},
            {"type": "user"},
            {"subtype": "task_notification", "task_id": "ab", "status": "completed"},
            {"type": "assistant"},
            {"type": "result", "result": "bg reported", "total_cost_usd": 0.5},
        ],
    ),
    # Capture ours/x_hook_block_prompt: a prompt a UserPromptSubmit hook blocked.
    "prompt_ended": (
        [
            {
                "type": "system",
                "subtype": "informational",
                "sessionId": S,
                "uuid": "pe",
                "parentUuid": None,
                "timestamp": ts(),
                "content": "UserPromptSubmit operation blocked by hook:\nno",
                "level": "warning",
                "preventContinuation": True,
                "promptSubmitEnding": {
                    "ending": {"kind": "blocked_by_hook", "reason": "no"},
                    "promptKept": False,
                },
            },
            {"type": "cost-state", "sessionId": S, "totalCostUSD": 0},
        ],
        [
            {"subtype": "init", "extension.prompt": None},
            {"subtype": "informational"},
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "num_turns": 0,
                "result": "UserPromptSubmit operation blocked by hook:\nno",
                "usage.input_tokens": 0,
                "total_cost_usd": 0,
            },
        ],
    ),
    # Capture ours/x_main_agent: claude --agent reviewer.
    "agent_setting": (
        [
            {"type": "agent-setting", "agentSetting": "reviewer", "sessionId": S},
            prompt("review main.py"),
            {"type": "agent-setting", "agentSetting": "reviewer", "sessionId": S},
            reply("g1", text("fine")),
        ],
        [
            {"subtype": "init", "extension.agentSetting": "reviewer"},
            {"type": "assistant"},
            {"type": "result", "extension.dropped.agent-setting": 2},
        ],
    ),
    "fork_agent": (
        [
            {
                "type": "fork-context-ref",
                "agentId": "abc",
                "parentSessionId": S,
                "contextLength": 3,
            },
            reply(
                "m0",
                tool("t0", "Agent", prompt="[fork-directive] count"),
                stop="tool_use",
                isSidechain=True,
                agentId="abc",
            ),
            {
                **result_of("t0", [text("Fork started")], isSidechain=True, agentId="abc"),
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t0",
                            "content": [text("Fork started")],
                        },
                        text("<fork-boilerplate>count the files</fork-boilerplate>"),
                    ],
                },
            },
            reply("m1", text("3 files"), isSidechain=True, agentId="abc"),
        ],
        [
            {
                "subtype": "init",
                "agent.role": "subagent",
                "extension.dropped.inherited/assistant": None,
            },
            {"type": "assistant", "message.content": [text("3 files")]},
            {
                "type": "result",
                "extension.dropped.inherited/assistant": 1,
                "extension.dropped.fork-context-ref": 1,
                "usage.output_tokens": 5,
            },
        ],
    ),
    "fork_copy": (
        [
            {
                "type": "queue-operation",
                "operation": "dequeue",
                "sessionId": S,
                "timestamp": "2026-12-01T11:00:00.000Z",
            },
            prompt("old turn", timestamp="2026-12-01T09:00:00.000Z"),
            reply("m0", text("old")),
            prompt("new turn", timestamp="2026-12-01T11:00:01.000Z"),
            reply("m1", text("new")),
        ],
        [
            {"subtype": "init", "extension.prompt": "new turn"},
            {"type": "assistant"},
            {
                "type": "result",
                "result": "new",
                "extension.dropped.inherited/user": 1,
                "extension.dropped.inherited/assistant": 1,
            },
        ],
    ),
    "system_plain": (
        [prompt("hi"), reply("m1", text("yo")), system(None, content="hook ran", level="info")],
        [
            *kinds("system/init", "assistant"),
            {"type": "system", "subtype": "notification", "body": "hook ran", "severity": "info"},
            {"type": "result"},
        ],
    ),
    "system_other": (
        [prompt("hi"), reply("m1", text("yo")), system("stop_hook_summary", hookCount=1)],
        [
            *kinds("system/init", "assistant"),
            {"type": "system", "subtype": "stop_hook_summary", "extension.hookCount": 1},
            {"type": "result"},
        ],
    ),
    "system_init": (
        [prompt("hi"), reply("m1", text("yo")), system("init", tools=["Bash"])],
        [
            *kinds("system/init", "assistant"),
            {
                "type": "system",
                "subtype": "unrecognized",
                "seq": 2,
                "kind": "system/init",
                "extension.record.tools": ["Bash"],
            },
            {"type": "result", "extension.unrecognized": {"system/init": 1}},
        ],
    ),
    "metadata": (
        [
            prompt("hi"),
            attachment("date", date="2026-12-01"),
            {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
            reply("m1", text("yo")),
        ],
        [
            *kinds("system/init", "assistant"),
            {
                "type": "result",
                "extension.dropped": {"attachment/date": 1, "file-history-snapshot": 1},
            },
        ],
    ),
    "progress": (
        [
            prompt("hi"),
            {"type": "progress", "sessionId": S, "data": {"type": "bash_progress"}},
            reply("m1", text("yo")),
        ],
        [
            *kinds("system/init", "assistant"),
            {"type": "result", "extension.dropped": {"progress/bash_progress": 1}},
        ],
    ),
    "unknown": (
        [prompt("hi"), reply("m1", text("yo")), {"type": "brand-new", "sessionId": S}],
        [
            *kinds("system/init", "assistant"),
            {
                "type": "system",
                "subtype": "unrecognized",
                "kind": "brand-new",
                "extension.record.type": "brand-new",
            },
            {"type": "result", "extension.unrecognized": {"brand-new": 1}},
        ],
    ),
}

# -- claude-stream records --------------------------------------------------------

INIT = {
    "type": "system",
    "subtype": "init",
    "session_id": S,
    "cwd": "/p",
    "tools": ["Bash"],
    "mcp_servers": [{"name": "demo", "status": "connected"}],
    "model": "claude-x",
    "permissionMode": "default",
}


def s_msg(role: str, content: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        message.update(
            id=kw.pop("mid", "m1"),
            model="claude-x",
            stop_reason=None,
            usage={"input_tokens": 1, "output_tokens": 1},
        )
    return {"type": role, "session_id": S, "parent_tool_use_id": None, "message": message, **kw}


def s_result(**kw: Any) -> dict[str, Any]:
    rec = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "session_id": S,
        "num_turns": 1,
        "result": "hi",
        "duration_ms": 10,
        "total_cost_usd": 0.5,
        "usage": {
            "input_tokens": 3,
            "output_tokens": 4,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }
    rec.update(kw)
    return rec


def event(ev: dict[str, Any]) -> dict[str, Any]:
    return {"type": "stream_event", "session_id": S, "parent_tool_use_id": None, "event": ev}


STREAM: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "init": (
        [INIT, s_msg("assistant", [text("hi")]), s_result()],
        [
            {
                "subtype": "init",
                "cwd": "/p",
                "tools": ["Bash"],
                "mcp_servers.0.name": "demo",
                "agent.model": "claude-x",
                "extension.permissionMode": "default",
                "capabilities": ["stream_v1"],
            },
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
    "before_init": (
        [
            {"type": "system", "subtype": "hook_started", "session_id": S, "hook_id": "h"},
            INIT,
            s_msg("assistant", [text("hi")]),
            s_result(),
        ],
        [
            {"subtype": "init"},
            {"type": "system", "subtype": "hook_started", "seq": 1},
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
    "assistant": (
        [
            INIT,
            s_msg(
                "assistant",
                [{"type": "redacted_thinking", "data": "x"}],
                uuid="u1",
                is_api_error_message=False,
            ),
            s_result(),
        ],
        [
            {"subtype": "init"},
            {
                "type": "assistant",
                "message.content.0.type": "redacted_thinking",
                "extension.message.model": "claude-x",
                "extension.uuid": "u1",
            },
            {"type": "result"},
        ],
    ),
    "user": (
        [
            INIT,
            s_msg(
                "user",
                [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
                tool_use_result=[{"type": "text", "text": "x"}],
            ),
            s_msg("user", [text("Output token limit hit.")], isSynthetic=True),
            s_result(),
        ],
        [
            {"subtype": "init"},
            {"type": "user", "tool_use_result": [{"type": "text", "text": "x"}]},
            {"type": "user", "extension.isSynthetic": True},
            {"type": "result"},
        ],
    ),
    "text_delta": (
        [
            INIT,
            event(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "h"},
                }
            ),
            s_result(),
        ],
        [
            {"subtype": "init", "capabilities": ["stream_v1", "partial_messages_v1"]},
            {"type": "stream_event", "event.type": "content_block_delta", "event.delta.text": "h"},
            {"type": "result"},
        ],
    ),
    "json_delta": (
        [
            INIT,
            event(
                {
                    "type": "content_block_start",
                    "index": 1,
                    "content_block": {"type": "tool_use", "id": "t9", "name": "Bash"},
                }
            ),
            event(
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": '{"a'},
                }
            ),
            s_result(),
        ],
        [
            {"subtype": "init"},
            {
                "type": "stream_event",
                "event.type": "tool_args_delta",
                "event.tool_use_id": "t9",
                "event.partial_json": '{"a',
            },
            {"type": "result"},
        ],
    ),
    "signature": (
        [
            INIT,
            event(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "signature_delta", "signature": "s"},
                }
            ),
            s_result(),
        ],
        [
            {"subtype": "init"},
            {"type": "result", "extension.dropped": {"stream_event/signature_delta": 1}},
        ],
    ),
    "api_framing": (
        [INIT, event({"type": "message_stop"}), s_result()],
        [
            {"subtype": "init"},
            {"type": "result", "extension.dropped": {"stream_event/message_stop": 1}},
        ],
    ),
    "other_event": (
        [INIT, event({"type": "ping"}), s_result()],
        [{"subtype": "init"}, {"type": "stream_event", "event.type": "ping"}, {"type": "result"}],
    ),
    "result": (
        [
            INIT,
            s_result(
                terminal_reason="completed",
                structured_output={"a": 1},
                model_usage_since_last_result={"claude-x": {"inputTokens": 3, "outputTokens": 4}},
            ),
        ],
        [
            {"subtype": "init"},
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "num_turns": 1,
                "result": "hi",
                "total_cost_usd": 0.5,
                "usage.output_tokens": 4,
                "model_usage.claude-x.input_tokens": 3,
                "extension.terminal_reason": "completed",
                "extension.structured_output": {"a": 1},
            },
        ],
    ),
    "result_zero_usage": (
        [
            INIT,
            s_msg("assistant", [tool("t1")]),
            s_result(
                subtype="error_max_budget_usd",
                is_error=True,
                usage={"input_tokens": 0, "output_tokens": 0},
                model_usage_since_last_result={"claude-x": {"inputTokens": 10, "outputTokens": 41}},
            ),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {
                "type": "result",
                "subtype": "error_max_budget_usd",
                "usage.input_tokens": 10,
                "usage.output_tokens": 41,
                "extension.usage.output_tokens": 0,
            },
        ],
    ),
    "no_result": (
        [
            INIT,
            s_msg("assistant", [tool("t1")]),
            s_msg("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "user"},
            {
                "type": "result",
                "subtype": "interrupted",
                "is_error": True,
                "num_turns": 2,
                "extension.cut_off": True,
            },
        ],
    ),
    "task": (
        [
            INIT,
            {
                "type": "system",
                "subtype": "task_started",
                "session_id": S,
                "task_id": "k",
                "status": "running",
                "description": "d",
            },
            s_result(),
        ],
        [
            {"subtype": "init"},
            {
                "subtype": "task_started",
                "task_id": "k",
                "status": "running",
                "task.description": "d",
            },
            {"type": "result"},
        ],
    ),
    "bg_tasks": (
        [
            INIT,
            {
                "type": "system",
                "subtype": "background_tasks_changed",
                "session_id": S,
                "tasks": [{"task_id": "k"}],
            },
            s_result(),
        ],
        [
            {"subtype": "init"},
            {
                "subtype": "background_tasks_changed",
                "running_ids": ["k"],
                "extension.tasks": [{"task_id": "k"}],
            },
            {"type": "result"},
        ],
    ),
    "system_other": (
        [
            INIT,
            {
                "type": "system",
                "subtype": "compact_boundary",
                "session_id": S,
                "compact_metadata": {"trigger": "auto"},
            },
            s_result(),
        ],
        [
            {"subtype": "init"},
            {"subtype": "compact_boundary", "extension.compact_metadata": {"trigger": "auto"}},
            {"type": "result"},
        ],
    ),
    "rate_limit": (
        [INIT, {"type": "rate_limit_event", "session_id": S, "rate_limit_info": {}}, s_result()],
        [
            {"subtype": "init"},
            {"subtype": "rate_limit", "extension.rate_limit_info": {}},
            {"type": "result"},
        ],
    ),
    "state": (
        [
            {
                "type": "system",
                "subtype": "session_state_changed",
                "state": "running",
                "session_id": S,
            },
            INIT,
            s_msg("assistant", [text("hi")]),
            s_result(),
            {
                "type": "system",
                "subtype": "session_state_changed",
                "state": "idle",
                "session_id": S,
            },
        ],
        [
            {"subtype": "init"},
            {"subtype": "state", "session_state": "running", "seq": 1},
            {"type": "assistant"},
            {"type": "result", "extension.dropped": None},
        ],
    ),
    "host_protocol": (
        [
            {"type": "control_response", "response": {"subtype": "success"}},
            INIT,
            s_msg("assistant", [text("hi")]),
            s_result(),
            {"type": "prompt_suggestion", "suggestion": "next", "session_id": S},
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "result", "extension.dropped.control_response": 1},
        ],
    ),
    "control_request": (
        [
            INIT,
            {
                "type": "control_request",
                "request_id": "r1",
                "request": {"subtype": "can_use_tool"},
                "session_id": S,
            },
            s_result(),
        ],
        [
            {"subtype": "init"},
            {"subtype": "control_request", "extension.request.subtype": "can_use_tool"},
            {"type": "result"},
        ],
    ),
    "local_echo": (
        [
            INIT,
            s_msg("assistant", [text("hi")]),
            s_result(),
            s_msg(
                "user",
                [text("<local-command-stdout>Set model to x</local-command-stdout>")],
                isReplay=True,
            ),
            INIT,
            s_msg("assistant", [text("again")]),
            s_result(result="again"),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {"type": "result"},
            {"subtype": "init"},
            {
                "subtype": "local_command_output",
                "body": "<local-command-stdout>Set model to x</local-command-stdout>",
            },
            {"type": "assistant"},
            {"type": "result", "result": "again"},
        ],
    ),
    "unknown": (
        [INIT, {"type": "command_lifecycle", "session_id": S}, s_result()],
        [
            {"subtype": "init"},
            {"subtype": "unrecognized", "kind": "command_lifecycle"},
            {"type": "result", "extension.unrecognized": {"command_lifecycle": 1}},
        ],
    ),
}

# -- stella events -------------------------------------------------------------------

STELLA: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "stage": (
        [
            {"type": "stage", "name": "plan", "scope": "turn", "session_id": "st"},
            {"type": "run_complete"},
        ],
        [
            {"subtype": "init"},
            {"subtype": "stage", "value": "plan", "category": "turn"},
            {"type": "result"},
        ],
    ),
    "text_delta": (
        [{"type": "text_delta", "delta": "he", "session_id": "st"}, {"type": "run_complete"}],
        [
            {"subtype": "init", "capabilities": ["stream_v1", "partial_messages_v1"]},
            {"type": "stream_event", "event.delta.text": "he", "event.index": 0},
            {"type": "result"},
        ],
    ),
    "text": (
        [{"type": "text", "text": "hello", "session_id": "st"}, {"type": "run_complete"}],
        [
            {"subtype": "init"},
            {"type": "assistant", "message.content": [text("hello")]},
            {"type": "result", "result": "hello"},
        ],
    ),
    "tool_start": (
        [
            {
                "type": "tool_start",
                "call_id": "c1",
                "name": "sh",
                "input": {"cmd": "ls"},
                "session_id": "st",
            },
            {"type": "run_complete"},
        ],
        [
            {"subtype": "init"},
            {"type": "assistant", "message.content": [tool("c1", "sh", cmd="ls")]},
            {"type": "result"},
        ],
    ),
    "tool_result": (
        [
            {
                "type": "tool_result",
                "call_id": "c1",
                "output": "x",
                "is_error": False,
                "duration_ms": 5,
                "session_id": "st",
            },
            {"type": "run_complete"},
        ],
        [
            {"subtype": "init"},
            {
                "type": "user",
                "message.content.0.tool_use_id": "c1",
                "message.content.0.content": "x",
                "tool_use_result.duration_ms": 5,
            },
            {"type": "result"},
        ],
    ),
    "step_usage": (
        [
            {
                "type": "step_usage",
                "input_tokens": 3,
                "output_tokens": 4,
                "model": "m",
                "duration_ms": 9,
                "session_id": "st",
            },
            {"type": "run_complete"},
        ],
        [
            {"subtype": "init"},
            {"subtype": "step_usage", "duration_ms": 9},
            {"type": "result", "usage.input_tokens": 3, "model_usage.m.output_tokens": 4},
        ],
    ),
    "turn_complete": (
        [
            {"type": "turn_complete", "stop_reason": "end_turn", "session_id": "st"},
            {"type": "run_complete"},
        ],
        [
            {"subtype": "init"},
            {"subtype": "turn_complete", "stop_reason": "end_turn"},
            {"type": "result", "num_turns": 1},
        ],
    ),
    "run_complete": (
        [
            {"type": "text", "text": "a", "session_id": "st"},
            {"type": "run_complete", "cost_usd": 0.2, "is_error": True, "model": "m"},
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "total_cost_usd": 0.2,
                "extension.model": "m",
            },
        ],
    ),
    "unknown": (
        [{"type": "novel", "session_id": "st"}, {"type": "run_complete"}],
        [
            {"subtype": "init"},
            {"subtype": "unrecognized", "kind": "novel"},
            {"type": "result", "extension.unrecognized": {"novel": 1}},
        ],
    ),
    "bad_body": (
        [{"type": "tool_start", "name": "sh", "session_id": "st"}, {"type": "run_complete"}],
        [
            {"subtype": "init"},
            {"subtype": "error", "extension.record.type": "tool_start"},
            {"type": "result"},
        ],
    ),
    "extra_fields": (
        [
            {"type": "text", "text": "a", "mood": "calm", "session_id": "st"},
            {"type": "run_complete"},
        ],
        [{"subtype": "init"}, {"type": "assistant", "extension.mood": "calm"}, {"type": "result"}],
    ),
}

# -- stream_v1 lines -------------------------------------------------------------------


def v1(kind: str, seq: int, **kw: Any) -> dict[str, Any]:
    return {"type": kind, "session_id": "v", "seq": seq, "ts": T0, **kw}


V1_INIT = v1(
    "system", 0, subtype="init", cwd="/p", agent={"name": "milk"}, capabilities=["stream_v1"]
)
V1_END = {"is_error": False, "subtype": "success", "num_turns": 1}

STREAM_V1: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "init": (
        [V1_INIT, v1("result", 1, **V1_END)],
        [{"subtype": "init", "cwd": "/p", "agent.name": "milk"}, {"type": "result"}],
    ),
    "assistant": (
        [
            V1_INIT,
            v1(
                "assistant",
                1,
                message={"role": "assistant", "content": [text("a")]},
                extension={"message": {"model": "m"}},
            ),
            v1("result", 2, **V1_END),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant", "message.content": [text("a")]},
            {"type": "result"},
        ],
    ),
    "user": (
        [
            V1_INIT,
            v1(
                "user",
                1,
                message={
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}],
                },
                tool_use_result={"path": "f"},
            ),
            v1("result", 2, **V1_END),
        ],
        [
            {"subtype": "init"},
            {"type": "user", "tool_use_result": {"path": "f"}},
            {"type": "result"},
        ],
    ),
    "stream_event": (
        [
            V1_INIT,
            v1(
                "stream_event",
                1,
                event={
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "x"},
                },
            ),
            v1("result", 2, **V1_END),
        ],
        [
            {"subtype": "init"},
            {"type": "stream_event", "event.delta.text": "x"},
            {"type": "result"},
        ],
    ),
    "error": (
        [
            V1_INIT,
            v1("system", 1, subtype="error", is_error=True, message="boom", recoverable=True),
            v1("result", 2, **V1_END),
        ],
        [{"subtype": "init"}, {"subtype": "error", "message": "boom"}, {"type": "result"}],
    ),
    "system_other": (
        [V1_INIT, v1("system", 1, subtype="warning", message="careful"), v1("result", 2, **V1_END)],
        [{"subtype": "init"}, {"subtype": "warning", "message": "careful"}, {"type": "result"}],
    ),
    "result": (
        [
            V1_INIT,
            v1("result", 1, **{**V1_END, "num_turns": 3, "total_cost_usd": 0.1, "result": "done"}),
        ],
        [
            {"subtype": "init"},
            {"type": "result", "num_turns": 3, "total_cost_usd": 0.1, "result": "done"},
        ],
    ),
    "unknown": (
        [V1_INIT, v1("novel", 1), v1("result", 2, **V1_END)],
        [{"subtype": "init"}, {"subtype": "unrecognized", "kind": "novel"}, {"type": "result"}],
    ),
}


# -- gemini (chat file, stream-json, json document) ------------------------------------

GS = "6cf9178a-33e2-4c83-98d0-c2921fb5f629"
GA = "f056c7df-c8c5-46d3-be59-5966957e9f07"
CTX = (
    "<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n"
    "  - /home/user/project\n- **Directory Structure:**\n</session_context>"
)


def g_meta(**kw: Any) -> dict[str, Any]:
    return {
        "sessionId": GS,
        "projectHash": "9dad",
        "startTime": T0,
        "lastUpdated": T0,
        "kind": "main",
        **kw,
    }


def g_ctx() -> dict[str, Any]:
    return {
        "$set": {
            "messages": [
                {"id": "ctx", "timestamp": T0, "type": "user", "content": [{"text": CTX}]}
            ],
            "lastUpdated": T0,
        }
    }


def g_user(mid: str, text_: str) -> dict[str, Any]:
    return {"id": mid, "timestamp": ts(), "type": "user", "content": [{"text": text_}]}


def g_reply(
    mid: str, text_: str = "", calls: list[dict[str, Any]] | None = None, **kw: Any
) -> dict[str, Any]:
    rec = {
        "id": mid,
        "timestamp": ts(),
        "type": "gemini",
        "content": text_,
        "thoughts": kw.pop("thoughts", []),
        "tokens": {"input": 100, "output": 5, "cached": 40, "thoughts": 2, "tool": 0, "total": 107},
        "model": "gemini-flash",
        **kw,
    }
    if calls is not None:
        rec["toolCalls"] = calls
    return rec


def g_call(cid: str, output: Any = "hi", status: str = "success", **kw: Any) -> dict[str, Any]:
    response = {"output": output} if status == "success" else {"error": output}
    return {
        "id": cid,
        "name": "run_shell_command",
        "args": {"command": "echo hi"},
        "result": [
            {"functionResponse": {"id": cid, "name": "run_shell_command", "response": response}}
        ],
        "status": status,
        "timestamp": ts(),
        "resultDisplay": "hi",
        "displayName": "Shell",
        **kw,
    }


def g_copy(mid: str, cid: str) -> dict[str, Any]:
    return {
        "id": mid,
        "timestamp": ts(),
        "type": "user",
        "content": [
            {
                "functionResponse": {
                    "id": cid,
                    "name": "run_shell_command",
                    "response": {"output": "hi"},
                }
            }
        ],
    }


LAST = {"$set": {"lastUpdated": T0}}
G_TURN = [g_meta(), g_ctx(), g_user("p1", "say hi"), LAST, g_reply("r1", "hi")]
G_INIT = {
    "subtype": "init",
    "session_id": GS,
    "agent.name": "gemini-cli",
    "agent.provider": "google",
    "agent.model": "gemini-flash",
    "cwd": "/home/user/project",
}
G_END = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "result": "hi",
    "usage.input_tokens": 60,
    "usage.cache_read": 40,
    "usage.output_tokens": 7,
}


def gj(kind: str, **kw: Any) -> dict[str, Any]:
    return {"type": kind, "timestamp": ts(), **kw}


GJ_STATS = {
    "total_tokens": 130,
    "input_tokens": 120,
    "output_tokens": 6,
    "cached": 50,
    "input": 70,
    "duration_ms": 9,
    "tool_calls": 0,
    "models": {
        "gemini-flash": {
            "total_tokens": 130,
            "input_tokens": 120,
            "output_tokens": 6,
            "cached": 50,
            "input": 70,
        }
    },
}

GEMINI: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "metadata": (
        G_TURN,
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {**G_END, "extension.dropped.gemini/metadata": 1},
        ],
    ),
    "set_last_updated": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply("r1", "hi"),
            LAST,
            g_reply("r1", "hi", [g_call("c1")]),
            g_copy("u2", "c1"),
            g_reply("r2", "done"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant", "message.content.1.id": "c1"},
            {"type": "user", "message.content.0.tool_use_id": "c1"},
            {"type": "assistant"},
            {"type": "result", "num_turns": 2, "extension.dropped.gemini/last_updated": 1},
        ],
    ),
    "set_messages": (
        [g_meta(), g_ctx(), g_user("p1", "fails"), LAST, g_ctx()],
        [
            {**G_INIT, "agent.model": None},
            {"type": "user"},
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "extension.rolled_back": True,
            },
        ],
    ),
    "set_session": (
        [g_meta(), g_ctx(), {"$set": {"sessionId": GS}}, g_user("p1", "x"), g_reply("r1", "hi")],
        [G_INIT, {"type": "user"}, {"type": "assistant"}, {"type": "result"}],
    ),
    "set_other": (
        [*G_TURN, {"$set": {"summary": "a title"}}, g_user("p2", "again"), g_reply("r2", "ok")],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
            {"subtype": "init"},
            {"subtype": "notification", "kind": "set", "extension.$set.summary": "a title"},
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
    "rewind": (
        [*G_TURN, {"$rewindTo": "p1"}, g_user("p2", "again"), g_reply("r2", "ok")],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
            {"subtype": "init"},
            {"subtype": "notification", "kind": "rewind", "id": "p1"},
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
    "set_messages_rebuilt": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply("r1", "", [g_call("c1")]),
            {
                "$set": {
                    "messages": [
                        {"id": "ctx", "timestamp": T0, "type": "user", "content": [{"text": CTX}]},
                        {"id": "n1", "type": "user", "content": [{"text": "<state_snapshot>"}]},
                        {"id": "n2", "type": "gemini", "content": [{"text": "Got it."}]},
                        {"id": "n3", "type": "user", "content": [{"text": "x"}]},
                    ],
                    "lastUpdated": T0,
                }
            },
            g_copy("u2", "c1"),
            g_reply("r2", "done"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {"type": "user"},
            {"type": "assistant"},
            {
                "type": "result",
                "subtype": "success",
                "num_turns": 2,
                "extension.rolled_back": None,
                "extension.dropped.gemini/checkpoint": 2,
            },
        ],
    ),
    "user_prompt": (
        G_TURN,
        [
            G_INIT,
            {"type": "user", "message.id": "p1", "message.content": [text("say hi")]},
            {"type": "assistant"},
            G_END,
        ],
    ),
    "user_context": (
        G_TURN,
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {
                "type": "result",
                "extension.dropped.gemini/session_context": None,
                "extension.dropped.gemini/checkpoint": 1,
            },
        ],
    ),
    "user_tool_copy": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply("r1", "", [g_call("c1")]),
            g_copy("u2", "c1"),
            g_reply("r2", "done"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result", "extension.dropped.gemini/tool_response_copy": 1},
        ],
    ),
    "gemini_history_copy": (
        [
            *G_TURN,
            {
                "id": "h1",
                "timestamp": ts(),
                "type": "gemini",
                "content": [{"text": "x"}, {"functionCall": {"name": "write_file", "args": {}}}],
                "thoughts": [],
                "tokens": None,
            },
            g_user("p2", "again"),
            g_reply("r2", "ok"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
            {"subtype": "init"},
            {"type": "user", "message.content": [text("again")]},
            {"type": "assistant"},
            {"type": "result", "extension.dropped.gemini/history_copy": 1},
        ],
    ),
    "gemini_command_calls": (
        [
            *G_TURN,
            {
                "id": "h2",
                "timestamp": ts(),
                "type": "gemini",
                "content": "",
                "thoughts": [],
                "model": "gemini-flash",
                "toolCalls": [g_call("write_file-1")],
            },
            g_user("p2", "again"),
            g_reply("r2", "ok"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
            {"subtype": "init"},
            {
                "subtype": "notification",
                "kind": "command_tool_calls",
                "extension.tools": ["run_shell_command"],
                "extension.toolCalls.0.id": "write_file-1",
            },
            {"type": "user", "message.content": [text("again")]},
            {"type": "assistant"},
            {"type": "result", "subtype": "success"},
        ],
    ),
    "gemini": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply(
                "r1", "hi", thoughts=[{"subject": "Plan", "description": "say it", "timestamp": T0}]
            ),
        ],
        [
            G_INIT,
            {"type": "user"},
            {
                "type": "assistant",
                "message.id": "r1",
                "message.content": [
                    {"type": "thinking", "thinking": "**Plan**\n\nsay it"},
                    text("hi"),
                ],
            },
            {**G_END, "num_turns": 1, "model_usage.gemini-flash.input_tokens": 60},
        ],
    ),
    "tool_call_result": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply("r1", "", [g_call("c1", "no such file", status="error")]),
            g_reply("r2", "sorry"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {
                "type": "assistant",
                "message.content.0.name": "run_shell_command",
                "message.content.0.input.command": "echo hi",
                "message.content.0.extension.displayName": "Shell",
            },
            {
                "type": "user",
                "message.content.0.is_error": True,
                "message.content.0.content": "no such file",
                "tool_use_result.status": "error",
                "tool_use_result.resultDisplay": "hi",
            },
            {"type": "assistant"},
            {"type": "result", "result": "sorry"},
        ],
    ),
    "tool_call_media": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply(
                "r1",
                "",
                [
                    {
                        **g_call("c1", "A 1x1 test image."),
                        "result": [
                            {
                                "functionResponse": {
                                    "id": "c1",
                                    "name": "mcp_imgsrv_get_image",
                                    "response": {"output": "A 1x1 test image."},
                                }
                            },
                            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                        ],
                    }
                ],
            ),
            {
                "id": "u2",
                "timestamp": ts(),
                "type": "user",
                "content": [
                    {"functionResponse": {"id": "c1", "name": "mcp_imgsrv_get_image"}},
                    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                ],
            },
            g_reply("r2", "done"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {
                "type": "user",
                "message.content.0.content": "A 1x1 test image.",
                "message.content.0.extension.parts.0.inlineData.mimeType": "image/png",
            },
            {"type": "assistant"},
            {
                "type": "result",
                "num_turns": 2,
                "extension.dropped.gemini/tool_response_copy": 1,
            },
        ],
    ),
    "parallel_calls": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply("r1", "both", [g_call("c1"), g_call("c2", "ho")]),
            g_reply("r2", "done"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {
                "type": "assistant",
                "message.content.0.text": "both",
                "message.content.1.id": "c1",
                "message.content.2.id": "c2",
            },
            {"type": "user", "message.content.0.tool_use_id": "c1"},
            {
                "type": "user",
                "message.content.0.tool_use_id": "c2",
                "message.content.0.content": "ho",
            },
            {"type": "assistant"},
            {"type": "result", "num_turns": 2},
        ],
    ),
    "tool_call_agent": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            g_reply(
                "r1",
                "",
                [
                    g_call(
                        "c1",
                        "Subagent 'generalist' finished.\nTermination Reason: GOAL\nResult:\n2",
                        agentId=GA,
                    )
                ],
            ),
            g_reply("r2", "two"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {
                "subtype": "task_notification",
                "task_id": GA,
                "task.tool_use_id": "c1",
                "extension.termination_reason": "GOAL",
            },
            {"type": "user", "tool_use_result.agentId": GA},
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
    "notice": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            {"id": "n1", "timestamp": ts(), "type": "info", "content": "saved"},
            g_reply("r1", "hi"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"subtype": "notification", "severity": "info", "message": "saved"},
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
    "subagent": (
        [
            {
                "sessionId": GA,
                "projectHash": "9dad",
                "startTime": T0,
                "lastUpdated": T0,
                "kind": "subagent",
                "directories": ["/home/user/project"],
            },
            g_user("s1", "count"),
            g_reply("s2", "", [g_call(f"{GA}#0-0")]),
            g_copy("s3", f"{GA}#0-0"),
            g_reply("s4", "two"),
            {"$set": {"summary": "two"}},
        ],
        [
            {"subtype": "init", "session_id": GS, "cwd": "/home/user/project"},
            {"type": "user", "message.content": [text("count")]},
            {"type": "assistant"},
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
    "stream_init": (
        [gj("init", session_id=GS, model="auto"), gj("result", status="success", stats=GJ_STATS)],
        [
            {
                "subtype": "init",
                "session_id": GS,
                "agent.name": "gemini-cli",
                "agent.model": None,
                "extension.model": "auto",
            },
            {"type": "result"},
        ],
    ),
    "stream_user": (
        [
            gj("init", session_id=GS, model="auto"),
            gj("message", role="user", content="hi?"),
            gj("result", status="success", stats=GJ_STATS),
        ],
        [
            {"subtype": "init"},
            {"type": "user", "message.content": [text("hi?")]},
            {"type": "result"},
        ],
    ),
    "stream_delta": (
        [
            gj("init", session_id=GS, model="auto"),
            gj("message", role="assistant", content="Hel", delta=True),
            gj("message", role="assistant", content="lo.", delta=True),
            gj("result", status="success", stats=GJ_STATS),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant", "message.content": [text("Hello.")]},
            {"type": "result", "result": "Hello.", "num_turns": 1},
        ],
    ),
    "stream_tool_use": (
        [
            gj("init", session_id=GS, model="auto"),
            gj("message", role="assistant", content="I'll look.", delta=True),
            gj("tool_use", tool_name="read_file", tool_id="t1", parameters={"path": "a"}),
            gj("result", status="success", stats=GJ_STATS),
        ],
        [
            {"subtype": "init"},
            {
                "type": "assistant",
                "message.content": [text("I'll look."), tool("t1", "read_file", path="a")],
            },
            {"type": "result"},
        ],
    ),
    "stream_tool_result": (
        [
            gj("init", session_id=GS, model="auto"),
            gj("tool_use", tool_name="read_file", tool_id="t1", parameters={}),
            gj(
                "tool_result",
                tool_id="t1",
                status="error",
                error={"type": "file_not_found", "message": "no file"},
            ),
            gj("result", status="success", stats=GJ_STATS),
        ],
        [
            {"subtype": "init"},
            {"type": "assistant"},
            {
                "type": "user",
                "message.content.0.is_error": True,
                "message.content.0.content": "no file",
                "tool_use_result.error.type": "file_not_found",
            },
            {"type": "result"},
        ],
    ),
    "stream_error": (
        [
            gj("init", session_id=GS, model="auto"),
            gj("error", severity="warning", message="loop detected"),
            gj("result", status="success", stats=GJ_STATS),
        ],
        [
            {"subtype": "init"},
            {"subtype": "notification", "severity": "warning", "message": "loop detected"},
            {"type": "result"},
        ],
    ),
    "stream_result": (
        [
            gj("init", session_id=GS, model="auto"),
            gj("message", role="user", content="q"),
            gj(
                "result",
                status="error",
                error={"type": "unknown", "message": "[API Error]"},
                stats=GJ_STATS,
            ),
        ],
        [
            {"subtype": "init"},
            {"type": "user"},
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "result": "[API Error]",
                "duration_ms": 9,
                "usage.input_tokens": 70,
                "usage.cache_read": 50,
                "usage.output_tokens": 10,
                "model_usage.gemini-flash.output_tokens": 10,
                "extension.error.type": "unknown",
            },
        ],
    ),
    "document": (
        [
            {"session_id": GS},
            {"response": "Paris."},
            {
                "stats": {
                    "models": {
                        "gemini-flash": {
                            "api": {"totalRequests": 1},
                            "tokens": {
                                "input": 60,
                                "prompt": 100,
                                "candidates": 5,
                                "total": 107,
                                "cached": 40,
                                "thoughts": 2,
                                "tool": 0,
                            },
                            "roles": {"main": {"totalRequests": 1}},
                        }
                    }
                }
            },
        ],
        [
            {"subtype": "init", "session_id": GS, "agent.model": "gemini-flash"},
            {"type": "assistant", "message.content": [text("Paris.")]},
            {
                "type": "result",
                "result": "Paris.",
                "num_turns": 1,
                "usage.input_tokens": 60,
                "usage.cache_read": 40,
                "usage.output_tokens": 7,
            },
        ],
    ),
    "unknown": (
        [*G_TURN, {"id": "x1", "timestamp": ts(), "type": "gemini_v2", "content": "?"}],
        [
            G_INIT,
            {"type": "user"},
            {"type": "assistant"},
            {"type": "result"},
            {"subtype": "init"},
            {"subtype": "unrecognized", "kind": "gemini_v2"},
            {"type": "result"},
        ],
    ),
    "bad_body": (
        [
            g_meta(),
            g_ctx(),
            g_user("p1", "x"),
            {**g_reply("r1", "hi"), "tokens": {"input": "many"}},
            g_reply("r2", "ok"),
        ],
        [
            G_INIT,
            {"type": "user"},
            {"subtype": "error", "extension.record.id": "r1"},
            {"type": "assistant"},
            {"type": "result"},
        ],
    ),
}


# -- codex records ----------------------------------------------------------------------

CX = "01a23325-0000-7000-8000-000000000001"


def cx(kind: str, payload: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """A rollout record: the envelope and its payload."""
    return {"timestamp": ts(), "type": kind, "payload": {**(payload or {}), **kw}}


def cx_meta(**kw: Any) -> dict[str, Any]:
    return cx(
        "session_meta",
        id=CX,
        session_id=CX,
        cwd="/p",
        cli_version="0.171.0",
        originator="codex_exec",
        base_instructions={"text": "You are Codex"},
        **kw,
    )


def cx_event(event_type: str, **kw: Any) -> dict[str, Any]:
    return cx("event_msg", type=event_type, **kw)


def cx_item(item_type: str, **kw: Any) -> dict[str, Any]:
    return cx_event("item_completed", item={"type": item_type, **kw})


def cx_resp(item_type: str, **kw: Any) -> dict[str, Any]:
    return cx("response_item", type=item_type, **kw)


def cx_usage(rid: str, inp: int = 10, cached: int = 4, out: int = 3) -> dict[str, Any]:
    return cx(
        "token_usage_record",
        response_id=rid,
        usage={
            "input_tokens": inp,
            "cached_input_tokens": cached,
            "cache_write_input_tokens": 1,
            "output_tokens": out,
            "reasoning_output_tokens": 0,
        },
    )


def cx_say(t: str, phase: str = "final_answer") -> dict[str, Any]:
    return cx_resp(
        "message", role="assistant", phase=phase, content=[{"type": "output_text", "text": t}]
    )


CX_START = [
    cx_meta(),
    cx_event("task_started", turn_id="t1"),
    cx_item("UserMessage", id="u1", content=[{"type": "text", "text": "go"}]),
]
CX_DONE = cx_event("task_complete", turn_id="t1", last_agent_message="done", duration_ms=7)
CX_INIT = {"subtype": "init", "agent.name": "codex", "agent.provider": "openai"}
CX_PROMPT = {"type": "user", "message.content": [text("go")]}
CX_RESULT = {"type": "result", "subtype": "success", "result": "done"}


def cx_run(*middle: dict[str, Any]) -> list[dict[str, Any]]:
    return [*CX_START, *middle, CX_DONE]


def ex(kind: str, **kw: Any) -> dict[str, Any]:
    return {"type": kind, **kw}


EX_START = [ex("thread.started", thread_id=CX), ex("turn.started")]
EX_USAGE = {
    "input_tokens": 10,
    "cached_input_tokens": 4,
    "cache_write_input_tokens": 0,
    "output_tokens": 3,
    "reasoning_output_tokens": 0,
}

CODEX: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "session_meta": (
        cx_run(),
        [
            {
                **CX_INIT,
                "session_id": CX,
                "cwd": "/p",
                "extension.cli_version": "0.171.0",
                "extension.base_instructions": None,
            },
            CX_PROMPT,
            CX_RESULT,
        ],
    ),
    "turn_context": (
        [
            *CX_START[:2],
            cx("turn_context", model="gpt-x", cwd="/q", approval_policy="never"),
            *CX_START[2:],
            CX_DONE,
        ],
        [
            {
                **CX_INIT,
                "agent.model": "gpt-x",
                "cwd": "/q",
                "extension.turn_context.approval_policy": "never",
            },
            CX_PROMPT,
            {
                **CX_RESULT,
                "extension.dropped": {
                    "turn_context": 1,
                    "event_msg/task_started": 1,
                    "session_meta": 1,
                },
            },
        ],
    ),
    "additional_tools": (
        [
            *CX_START[:2],
            cx_resp(
                "additional_tools",
                tools=[
                    {
                        "type": "namespace",
                        "name": "functions",
                        "tools": [{"type": "custom", "name": "exec"}],
                    }
                ],
            ),
            *CX_START[2:],
            CX_DONE,
        ],
        [{**CX_INIT, "tools": ["functions.exec"]}, CX_PROMPT, CX_RESULT],
    ),
    "task_started": (cx_run(), [{**CX_INIT, "seq": 0}, CX_PROMPT, CX_RESULT]),
    "user_message": (
        [cx_meta(), cx_event("user_message", message="hi"), CX_DONE],
        [CX_INIT, {"type": "user", "message.content": [text("hi")]}, CX_RESULT],
    ),
    "history_user": (
        cx_run(
            cx_resp("message", role="developer", content=[{"type": "input_text", "text": "rules"}]),
            cx_resp("message", role="user", content=[{"type": "input_text", "text": "go"}]),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                **CX_RESULT,
                "extension.dropped.response_item/message/developer": 1,
                "extension.dropped.response_item/message/user": 1,
            },
        ],
    ),
    "assistant": (
        cx_run(cx_say("hello", "commentary"), cx_usage("r1")),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "assistant",
                "message.id": "r1",
                "message.content": [text("hello")],
                "extension.phase": "commentary",
            },
            CX_RESULT,
        ],
    ),
    "reasoning": (
        cx_run(
            cx_resp(
                "reasoning",
                summary=[
                    {"type": "summary_text", "text": "a"},
                    {"type": "summary_text", "text": "b"},
                ],
                encrypted_content="xyz",
            ),
            cx_usage("r1"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "assistant",
                "message.content.0.thinking": "a\n\nb",
                "message.content.0.extension.encrypted_content": "xyz",
            },
            CX_RESULT,
        ],
    ),
    "function_call": (
        cx_run(
            cx_resp(
                "function_call",
                call_id="c1",
                name="spawn_agent",
                namespace="collaboration",
                arguments='{"task_name": "x"}',
            ),
            cx_usage("r1"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "assistant",
                "message.content": [tool("c1", "collaboration.spawn_agent", task_name="x")],
            },
            CX_RESULT,
        ],
    ),
    "custom_tool_call": (
        cx_run(
            cx_resp(
                "custom_tool_call",
                call_id="c1",
                name="exec",
                namespace="functions",
                input="text('hi')",
            ),
            cx_usage("r1"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "assistant",
                "message.content": [
                    {
                        "type": "tool_use",
                        "id": "c1",
                        "name": "functions.exec",
                        "input": {"input": "text('hi')"},
                    }
                ],
            },
            CX_RESULT,
        ],
    ),
    "local_shell_call": (
        cx_run(
            cx_resp(
                "local_shell_call",
                call_id="c1",
                status="completed",
                action={"type": "exec", "command": ["ls"]},
            )
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "assistant",
                "message.content": [tool("c1", "local_shell", type="exec", command=["ls"])],
            },
            CX_RESULT,
        ],
    ),
    "parallel_calls": (
        cx_run(
            cx_resp("function_call", call_id="c1", name="exec_command", arguments='{"cmd":"a"}'),
            cx_resp("function_call", call_id="c2", name="exec_command", arguments='{"cmd":"b"}'),
            cx_usage("r1"),
            cx_resp("function_call_output", call_id="c1", output="Process exited with code 0"),
            cx_resp("function_call_output", call_id="c2", output="Process exited with code 1"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "assistant",
                "message.content.0.id": "c1",
                "message.content.1.id": "c2",
                "message.id": "r1",
            },
            {"message.content.0.tool_use_id": "c1", "message.content.0.is_error": False},
            {"message.content.0.tool_use_id": "c2", "message.content.0.is_error": True},
            CX_RESULT,
        ],
    ),
    "web_search": (
        cx_run(
            cx_item("WebSearch", id="ws1", query="q", action={"type": "search", "query": "q"}),
            cx_resp("web_search_call", id="ws1", status="completed", action={"type": "search"}),
            cx_say("found"),
            cx_usage("r1"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "assistant",
                "message.content.0.name": "web_search",
                "message.content.0.input.query": "q",
                "message.content.1.text": "found",
                "message.id": "r1",
            },
            {
                "type": "user",
                "message.content.0.tool_use_id": "ws1",
                "message.content.0.is_error": False,
                "tool_use_result.status": "completed",
            },
            {**CX_RESULT, "extension.dropped.item_completed/WebSearch": 1},
        ],
    ),
    "tool_search": (
        cx_run(
            cx_resp(
                "tool_search_call",
                call_id="s1",
                execution="client",
                arguments={"query": "calendar"},
            ),
            cx_resp(
                "tool_search_output",
                call_id="s1",
                status="completed",
                execution="client",
                tools=[],
            ),
            cx_resp("tool_search_call", id="s2", execution="server", arguments={"query": "x"}),
            cx_resp("tool_search_output", execution="server", status="completed", tools=[]),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {"message.content.0.name": "tool_search", "message.content.0.input.query": "calendar"},
            {
                "message.content.0.tool_use_id": "s1",
                "message.content.0.content": "[]",
                "message.content.0.is_error": False,
                "tool_use_result.execution": "client",
            },
            {"message.content.0.id": "s2"},
            {"message.content.0.tool_use_id": "s2"},
            CX_RESULT,
        ],
    ),
    "context_output": (
        cx_run(
            cx_resp("function_call_output", id="f1", name="goal_objective", output="Count"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {**CX_RESULT, "extension.dropped.response_item/function_call_output/no_call_id": 1},
        ],
    ),
    "patch_refused": (
        cx_run(
            cx_resp("custom_tool_call", call_id="p1", name="apply_patch", input="*** Begin"),
            cx_resp(
                "custom_tool_call_output",
                call_id="p1",
                output="apply_patch verification failed: Failed to read file",
            ),
            cx_resp("custom_tool_call", call_id="p2", name="apply_patch", input="*** Begin"),
            cx_item("FileChange", id="p2", status="completed", changes={}),
            cx_resp("custom_tool_call_output", call_id="p2", output="Exit code: 0\nOutput:"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {"message.content.0.name": "apply_patch"},
            {"message.content.0.tool_use_id": "p1", "message.content.0.is_error": True},
            {"message.content.0.name": "apply_patch"},
            {"message.content.0.tool_use_id": "p2", "message.content.0.is_error": False},
            CX_RESULT,
        ],
    ),
    "token_usage_record": (
        cx_run(cx_say("a"), cx_usage("r1"), cx_say("b"), cx_usage("r2", 20, 10, 5)),
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant", "message.id": "r1"},
            {"type": "assistant", "message.id": "r2"},
            {
                **CX_RESULT,
                "num_turns": 2,
                "usage": {
                    "input_tokens": 16,
                    "output_tokens": 8,
                    "cache_read": 14,
                    "cache_creation": 2,
                },
            },
        ],
    ),
    "call_output": (
        cx_run(
            cx_resp("custom_tool_call", call_id="c1", name="exec", input="x"),
            cx_usage("r1"),
            cx_resp(
                "custom_tool_call_output",
                call_id="c1",
                output=[
                    {"type": "input_text", "text": "Script failed\n"},
                    {"type": "input_text", "text": "TypeError"},
                ],
            ),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant"},
            {
                "type": "user",
                "message.content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "c1",
                        "content": "Script failed\nTypeError",
                        "is_error": True,
                    }
                ],
            },
            CX_RESULT,
        ],
    ),
    "nested_execution": (
        cx_run(
            cx_resp("custom_tool_call", call_id="c1", name="exec", input="x"),
            cx_usage("r1"),
            cx_item(
                "CommandExecution",
                id="exec-1",
                command=["ls"],
                status="failed",
                aggregated_output="nope",
                exit_code=2,
            ),
            cx_resp("custom_tool_call_output", call_id="c1", output="Script completed"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant"},
            {
                "type": "assistant",
                "parent_tool_use_id": "c1",
                "message.content": [tool("exec-1", "command_execution", command=["ls"])],
            },
            {
                "type": "user",
                "parent_tool_use_id": "c1",
                "message.content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "exec-1",
                        "content": "nope",
                        "is_error": True,
                    }
                ],
                "tool_use_result.exit_code": 2,
            },
            {"type": "user", "parent_tool_use_id": None},
            CX_RESULT,
        ],
    ),
    "direct_execution": (
        cx_run(
            cx_resp("function_call", call_id="c1", name="exec_command", arguments='{"cmd": "ls"}'),
            cx_usage("r1"),
            cx_item(
                "CommandExecution", id="c1", status="completed", exit_code=0, aggregated_output="a"
            ),
            cx_resp("function_call_output", call_id="c1", output="a"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant"},
            {"type": "user", "message.content.0.is_error": False, "tool_use_result.exit_code": 0},
            {**CX_RESULT, "extension.dropped.item_completed/CommandExecution": 1},
        ],
    ),
    "repeats": (
        cx_run(
            cx_item("AgentMessage", id="m1", content=[]),
            cx_say("done"),
            cx_usage("r1"),
            cx_event("token_count", info={"last_token_usage": EX_USAGE}),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant"},
            {
                **CX_RESULT,
                "usage.output_tokens": 3,
                "extension.dropped.item_completed/AgentMessage": 1,
                "extension.dropped.event_msg/token_count": 1,
            },
        ],
    ),
    "legacy_usage": (
        cx_run(
            cx_say("done"),
            cx_event(
                "token_count", info={"last_token_usage": EX_USAGE, "total_token_usage": EX_USAGE}
            ),
            cx_event(
                "token_count", info={"last_token_usage": EX_USAGE, "total_token_usage": EX_USAGE}
            ),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant"},
            {
                **CX_RESULT,
                "usage": {
                    "input_tokens": 6,
                    "output_tokens": 3,
                    "cache_read": 4,
                    "cache_creation": 0,
                },
            },
        ],
    ),
    "task_complete": (
        [
            *CX_START,
            cx_event(
                "task_complete",
                last_agent_message=None,
                duration_ms=9,
                time_to_first_token_ms=2,
                error={"message": "boom", "codex_error_info": "other"},
            ),
        ],
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "result": "boom",
                "duration_ms": 9,
                "ttft_ms": 2,
                "extension.error.codex_error_info": "other",
            },
        ],
    ),
    "turn_aborted": (
        [
            *CX_START,
            cx_say("partial"),
            cx_event("turn_aborted", turn_id="t1", reason="interrupted", duration_ms=5),
        ],
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant"},
            {
                "type": "result",
                "subtype": "interrupted",
                "is_error": True,
                "stop_reason": "interrupted",
                "duration_ms": 5,
                "extension.turn_id": "t1",
            },
        ],
    ),
    "continuation_aborted": (
        [
            *cx_run(),
            cx_event(
                "task_started",
                turn_id="t2",
                turn_attribution={"turn_trigger": "goal", "parent_turn_id": "t1"},
            ),
            cx_resp(
                "message",
                role="user",
                content=[{"type": "input_text", "text": "<turn_aborted>\nstopped"}],
            ),
            cx_event("turn_aborted", turn_id="t2", reason="interrupted", duration_ms=8),
        ],
        [CX_INIT, CX_PROMPT, CX_RESULT],
    ),
    "killed": (
        [*CX_START, cx_say("partial"), cx_usage("r1")],
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "assistant"},
            {
                "type": "result",
                "subtype": "interrupted",
                "is_error": True,
                "usage.output_tokens": 3,
            },
        ],
    ),
    "subagent_spawn": (
        cx_run(cx_item("SubAgentActivity", id="c1", kind="started", agent_thread_id="k1")),
        [
            CX_INIT,
            CX_PROMPT,
            {**CX_RESULT, "extension.dropped.item_completed/SubAgentActivity/started": 1},
        ],
    ),
    "subagent_done": (
        cx_run(
            cx_item("SubAgentActivity", id="c1", kind="started", agent_thread_id="k1"),
            cx_item("SubAgentActivity", id="s2", kind="completed", agent_thread_id="k1"),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "subtype": "task_notification",
                "task_id": "k1",
                "status": "completed",
                "task.tool_use_id": "c1",
            },
            CX_RESULT,
        ],
    ),
    "child_rollout": (
        [
            cx(
                "session_meta",
                id="k1",
                session_id=CX,
                parent_thread_id="p0",
                thread_source="subagent",
                agent_path="/root/count",
            ),
            cx_event("task_started"),
            cx_say("child says"),
            cx_usage("r1"),
            CX_DONE,
        ],
        [
            {**CX_INIT, "session_id": CX, "agent.role": "subagent"},
            {"type": "assistant", "parent_tool_use_id": None},
            {"type": "result", "result": "done"},
        ],
    ),
    "review": (
        [
            cx_meta(),
            cx_event(
                "item_completed",
                thread_id=CX,
                turn_id="t1",
                item={"type": "EnteredReviewMode", "id": "r1", "target": {"type": "custom"}},
            ),
            {
                **cx_event("task_complete", turn_id="t1", last_agent_message=None),
                "ordinal": 9,
            },
        ],
        [
            CX_INIT,
            {
                "type": "assistant",
                "message.content.0.id": "r1",
                "message.content.0.name": "review",
                "message.content.0.input.target.type": "custom",
            },
            {"type": "result", "subtype": "success", "num_turns": 0},
        ],
    ),
    "review_done": (
        [
            cx_meta(),
            cx_event(
                "item_completed",
                thread_id=CX,
                turn_id="t1",
                item={"type": "EnteredReviewMode", "id": "r1", "target": {"type": "custom"}},
            ),
            cx_resp(
                "message",
                role="user",
                content=[{"type": "input_text", "text": "<user_action> review"}],
            ),
            cx_event(
                "item_completed",
                thread_id=CX,
                turn_id="t1",
                item={
                    "type": "ExitedReviewMode",
                    "id": "r2",
                    "review_output": {"findings": [], "overall_explanation": "fine"},
                },
            ),
            cx_say("fine"),
            cx_event("task_complete", turn_id="t1", last_agent_message=None),
        ],
        [
            CX_INIT,
            {"message.content.0.name": "review"},
            {
                "type": "user",
                "message.content.0.tool_use_id": "r1",
                "message.content.0.content": "fine",
                "message.content.0.is_error": False,
                "tool_use_result.review_output.findings": [],
            },
            {"type": "assistant", "message.content": [text("fine")]},
            {"type": "result", "result": "fine", "extension.dropped.response_item/message/user": 1},
        ],
    ),
    "mirrored_child": (
        [
            cx_meta(),
            cx_event(
                "item_completed",
                thread_id=CX,
                turn_id="t1",
                item={"type": "EnteredReviewMode", "id": "r1", "target": {"type": "custom"}},
            ),
            cx_event("task_started", turn_id="t2", turn_attribution={"parent_turn_id": "t1"}),
            cx_event(
                "item_completed",
                thread_id="k1",
                turn_id="t2",
                item={"type": "UserMessage", "content": [{"type": "text", "text": "x"}]},
            ),
            cx_event("task_complete", turn_id="t1", last_agent_message=None),
        ],
        [
            CX_INIT,
            {"message.content.0.name": "review"},
            {
                "type": "result",
                "extension.dropped.event_msg/task_started/child_turn": 1,
                "extension.dropped.item_completed/UserMessage/other_thread": 1,
            },
        ],
    ),
    "no_call_run": (
        [
            *CX_START,
            {**cx_event("task_complete", turn_id="t1", last_agent_message="ok"), "ordinal": 5},
        ],
        [
            CX_INIT,
            CX_PROMPT,
            {"type": "result", "num_turns": 0, "usage.input_tokens": 0, "usage.output_tokens": 0},
        ],
    ),
    "prompt_image": (
        [
            cx_meta(),
            cx_event("task_started", turn_id="t1"),
            cx_item(
                "UserMessage",
                content=[
                    {"type": "local_image", "path": "image.png"},
                    {"type": "text", "text": "what is it?"},
                ],
            ),
            CX_DONE,
        ],
        [
            CX_INIT,
            {
                "type": "user",
                "message.content": [
                    {"type": "local_image", "extension": {"path": "image.png"}},
                    text("what is it?"),
                ],
            },
            CX_RESULT,
        ],
    ),
    "fork": (
        [cx_meta(forked_from_id="01a23325-0000-7000-8000-0000000000ff"), *CX_START[1:], CX_DONE],
        [
            {
                **CX_INIT,
                "session_id": CX,
                "extension.forked_from_id": "01a23325-0000-7000-8000-0000000000ff",
            },
            CX_PROMPT,
            CX_RESULT,
        ],
    ),
    "agent_message": (
        cx_run(
            cx_resp(
                "agent_message",
                author="/root/a",
                recipient="/root",
                content=[{"type": "input_text", "text": "FINAL_ANSWER: 2"}],
            )
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "type": "user",
                "message.content": [text("FINAL_ANSWER: 2")],
                "extension.author": "/root/a",
            },
            CX_RESULT,
        ],
    ),
    "configuration_update": (
        cx_run(cx_resp("configuration_update", reasoning={"effort": "low"})),
        [
            CX_INIT,
            CX_PROMPT,
            {
                "subtype": "warning",
                "kind": "configuration_update",
                "extension.reasoning.effort": "low",
            },
            CX_RESULT,
        ],
    ),
    "metadata": (
        cx_run(
            cx("world_state", full=True, state={}),
            cx_event("thread_settings_applied", thread_id=CX),
        ),
        [
            CX_INIT,
            CX_PROMPT,
            {
                **CX_RESULT,
                "extension.dropped.world_state": 1,
                "extension.dropped.event_msg/thread_settings_applied": 1,
            },
        ],
    ),
    "bare_format": (
        [
            {"id": "s9", "timestamp": T0, "instructions": None},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}],
            },
        ],
        [
            {**CX_INIT, "session_id": "s9"},
            CX_PROMPT,
            {"type": "assistant", "message.content": [text("done")]},
            CX_RESULT,
        ],
    ),
    "exec_thread": (
        [*EX_START, ex("turn.completed", usage=EX_USAGE)],
        [{**CX_INIT, "session_id": CX}, {"type": "result", "subtype": "success"}],
    ),
    "exec_turn": (
        [*EX_START, ex("turn.completed", usage=EX_USAGE)],
        [{**CX_INIT, "agent.model": None, "cwd": None}, {"type": "result"}],
    ),
    "exec_text": (
        [
            *EX_START,
            ex("item.completed", item={"id": "item_0", "type": "reasoning", "text": "hm"}),
            ex("item.completed", item={"id": "item_1", "type": "agent_message", "text": "hi"}),
            ex("turn.completed", usage=EX_USAGE),
        ],
        [
            CX_INIT,
            {"type": "assistant", "message.content.0.thinking": "hm"},
            {"type": "assistant", "message.content": [text("hi")]},
            {"type": "result", "result": "hi"},
        ],
    ),
    "exec_tool": (
        [
            *EX_START,
            ex(
                "item.started",
                item={
                    "id": "item_0",
                    "type": "command_execution",
                    "command": "ls",
                    "aggregated_output": "",
                    "exit_code": None,
                    "status": "in_progress",
                },
            ),
            ex(
                "item.completed",
                item={
                    "id": "item_0",
                    "type": "command_execution",
                    "command": "ls",
                    "aggregated_output": "no",
                    "exit_code": 1,
                    "status": "failed",
                },
            ),
            ex("turn.completed", usage=EX_USAGE),
        ],
        [
            CX_INIT,
            {
                "type": "assistant",
                "message.content": [tool("item_0", "command_execution", command="ls")],
            },
            {
                "type": "user",
                "message.content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "item_0",
                        "content": "no",
                        "is_error": True,
                    }
                ],
                "tool_use_result.exit_code": 1,
            },
            {"type": "result"},
        ],
    ),
    "exec_completed": (
        [
            *EX_START,
            ex("turn.completed", usage=EX_USAGE),
            ex("turn.started"),
            ex("turn.completed", usage={**EX_USAGE, "input_tokens": 25, "output_tokens": 5}),
        ],
        [
            CX_INIT,
            {
                "type": "result",
                "usage": {
                    "input_tokens": 6,
                    "output_tokens": 3,
                    "cache_read": 4,
                    "cache_creation": 0,
                },
                "extension.thread_usage.input_tokens": 10,
            },
            CX_INIT,
            {
                "type": "result",
                "usage": {
                    "input_tokens": 15,
                    "output_tokens": 2,
                    "cache_read": 0,
                    "cache_creation": 0,
                },
            },
        ],
    ),
    "exec_failed": (
        [*EX_START, ex("turn.failed", error={"message": "boom"})],
        [
            CX_INIT,
            {
                "type": "result",
                "subtype": "error_during_execution",
                "is_error": True,
                "result": "boom",
            },
        ],
    ),
    "exec_error": (
        [
            *EX_START,
            ex("error", message="Reconnecting... 1/5"),
            ex("item.completed", item={"id": "item_0", "type": "error", "message": "fallback"}),
            ex("turn.failed", error={"message": "boom"}),
        ],
        [
            CX_INIT,
            {"subtype": "warning", "message": "Reconnecting... 1/5"},
            {"subtype": "warning", "message": "fallback"},
            {"type": "result"},
        ],
    ),
    "unknown": (
        cx_run(cx_resp("computer_call", action={})),
        [
            CX_INIT,
            CX_PROMPT,
            {"subtype": "unrecognized", "kind": "response_item/computer_call"},
            {**CX_RESULT, "extension.unrecognized": {"response_item/computer_call": 1}},
        ],
    ),
    "bad_body": (
        cx_run(cx_resp("function_call", name="f", arguments="{}")),
        [
            CX_INIT,
            CX_PROMPT,
            {"subtype": "error", "extension.record.type": "response_item"},
            CX_RESULT,
        ],
    ),
}

TABLES = {
    "claude-session": SESSION,
    "claude-stream": STREAM,
    "stella": STELLA,
    "stream_v1": STREAM_V1,
    "gemini": GEMINI,
    "codex": CODEX,
}

_MISSING = object()


def field(line: dict[str, Any], path: str) -> Any:
    """A dotted path into a line; ``extension.dropped.inherited/user`` style keys are
    whole segments, list indexes are numbers."""
    value: Any = line
    for part in path.split("."):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def _cases() -> list[tuple[str, str]]:
    return [(source, key) for source, table in TABLES.items() for key in table]


@pytest.mark.parametrize(("source", "key"), _cases(), ids=lambda v: str(v))
def test_mapping_row(source: str, key: str, tmp_path: Path) -> None:
    records, expected = TABLES[source][key]
    if isinstance(records, dict):
        # Several files of one session (a row about where a file sits), converted
        # together as ``streamv1 convert`` converts a folder.
        for rel, body in records.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(body, list):
                path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in body))
            else:
                path.write_bytes(orjson.dumps(body))
        out, _ = convert_session_files(sorted(p for p in tmp_path.rglob("*.jsonl")), source=source)
        _expect(lines_of(out), expected)
        return
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    name = "agent-abc.jsonl" if key in ("agent_file", "fork_agent") else f"{S}.jsonl"
    if key == "unspawned_agent":
        # beside its session file, whose one run spawns no agent
        parent = [prompt("hi"), reply("m0", text("hello")), cost(0.1)]
        (tmp_path / f"{S}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in parent))
        name = str(tmp_path / "agent-abc.jsonl")
    if source == "gemini":
        # A subagent's file in its parent's folder (no parent file there: an actor of
        # its own); a main chat file otherwise.
        name = (
            f"/nonexistent/chats/{GS}/{GA}.jsonl"
            if key == "subagent"
            else "/nonexistent/chats/session-2026-12-01T10-00-6cf9178a.jsonl"
        )
    out, _ = convert_bytes(data, name, source)
    _expect(lines_of(out), expected)


def _expect(lines: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert len(lines) == len(expected), [(x["type"], x.get("subtype")) for x in lines]
    for i, (line, want) in enumerate(zip(lines, expected, strict=True)):
        for path, value in want.items():
            got = field(line, path)
            if value is None:
                assert got in (None, _MISSING), f"line {i} {path}: {got!r}"
            else:
                assert got == value, f"line {i} {path}: {got!r} != {value!r}"


@pytest.mark.parametrize("source", sorted(TABLES))
def test_every_row_has_its_example_and_no_more(source: str) -> None:
    rows = {row.key for row in sources()[source].mapping}
    assert rows == set(TABLES[source])


def test_docs_mapping_is_made_from_the_adapters() -> None:
    """docs/mapping.md's tables are made from the adapters' MAPPING (see
    translator.reading.mapping)."""
    doc = (ROOT / "docs" / "mapping.md").read_text("utf-8")
    assert mapping.missing_blocks(doc) == []
    assert mapping.rewrite(doc) == doc, "run: python -m streamv1.translator.reading.mapping"


def test_an_unlinked_inline_subagent_is_a_run_of_its_own_after_its_parents() -> None:
    """No Task call names the sidechain's prompt: its id is not invented, and its run
    (and usage) comes whole after the parent's run, never interleaved with it."""
    records = [
        prompt("main", uuid="p0", isSidechain=False),
        reply(
            "m1", tool("t1", "Task", prompt="something else"), stop="tool_use", isSidechain=False
        ),
        prompt("suggest a next prompt", uuid="s0", isSidechain=True),
        reply("m2", text("try tests"), uuid="s1", parentUuid="s0", isSidechain=True, out=11),
        result_of("t1", "done", isSidechain=False),
        reply("m3", text("All done."), isSidechain=False),
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    out, _ = convert_bytes(data, f"{S}.jsonl", "claude-session")
    from helpers import framing_violations

    assert framing_violations(out) == []
    lines = lines_of(out)
    shape = [
        (
            x["type"],
            x.get("subtype"),
            x.get("agent", {}).get("role") if isinstance(x.get("agent"), dict) else None,
        )
        for x in lines
    ]
    assert shape == [
        ("system", "init", None),
        ("assistant", None, None),
        ("user", None, None),
        ("assistant", None, None),
        ("result", "success", None),
        ("system", "init", "subagent"),
        ("assistant", None, None),
        ("result", "success", None),
    ]
    assert all("parent_tool_use_id" not in x for x in lines)
    assert lines[-1]["usage"]["output_tokens"] == 11
    assert lines[4]["usage"]["output_tokens"] == 10


def test_a_sidechain_record_whose_chain_starts_elsewhere_is_never_the_parents() -> None:
    """A sidechain reply whose prompt is not in the file (a cut file): its own
    unlinked run, so the parent's turn state and usage stay the parent's."""
    records = [
        prompt("main", uuid="p0", isSidechain=False),
        reply("m1", text("working"), stop="end_turn", isSidechain=False),
        reply(
            "m2",
            tool("t9"),
            stop="tool_use",
            uuid="s5",
            parentUuid="gone",
            isSidechain=True,
            out=13,
        ),
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    out, _ = convert_bytes(data, f"{S}.jsonl", "claude-session")
    from helpers import framing_violations

    assert framing_violations(out) == []
    lines = lines_of(out)
    results = [x for x in lines if x["type"] == "result"]
    # The parent's turn ended on its own word: its unanswered-looking tool call was
    # the subagent's, so it is not cut off.
    assert results[0]["subtype"] == "success" and results[0]["usage"]["output_tokens"] == 5
    assert results[1]["usage"]["output_tokens"] == 13
    assert [x.get("agent", {}).get("role") for x in lines if x.get("subtype") == "init"] == [
        None,
        "subagent",
    ]


@pytest.mark.parametrize(
    ("version", "want"),
    [
        # 1.0.17-1.0.128 print the conversation's messages less one: both runs' 5
        # main-thread records (the sidechain's are not the conversation's), then 7.
        ("1.0.128", [4, 6]),
        ("1.0.17", [4, 6]),
        # 1.0.0 pushes messages the file does not hold; 2.x counts the run's own.
        ("1.0.5", [2, 1]),
        ("2.0.77", [2, 1]),
    ],
)
def test_num_turns_by_the_version_that_wrote_the_run(version: str, want: list[int]) -> None:
    v = {"version": version}
    records = [
        prompt("one", **v),
        reply("m1", text("on it"), stop=None, **v),
        reply("m1", tool("t1", "Task", prompt="side"), stop=None, **v),
        prompt("side", uuid="s0", isSidechain=True, **v),
        reply("m2", text("side"), uuid="s1", parentUuid="s0", isSidechain=True, **v),
        result_of("t1", **v),
        reply("m3", text("done"), stop=None, **v),
        prompt("two", **v),
        reply("m4", text("yes"), stop=None, **v),
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    out, _ = convert_bytes(data, f"{S}.jsonl", "claude-session")
    results = [
        x for x in lines_of(out) if x["type"] == "result" and not x.get("parent_tool_use_id")
    ]
    assert [(r["subtype"], r["num_turns"]) for r in results] == [("success", n) for n in want]
