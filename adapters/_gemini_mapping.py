"""What each Gemini CLI record becomes: the source's ``MAPPING`` table.

docs/mapping.md's gemini table is made from it and each row has its example in
tests/test_mapping_tables.py. Apart from the adapter: it is prose for people, and
the adapter's code never reads it.
"""

from __future__ import annotations

from streamv1.translator.reading.mapping import Row

MAPPING = (
    Row(
        "metadata",
        "chat: metadata line `{sessionId, projectHash, startTime, lastUpdated, "
        "kind, directories?}`",
        "no line (counted as dropped `gemini/metadata`): the session id, `kind` "
        "(`subagent`: a nested actor's file), `directories[0]` as `cwd`; a second one is "
        "a new process (a resume): a run still open there ends `interrupted`",
    ),
    Row(
        "set_last_updated",
        'chat: `{"$set": {"lastUpdated"}}`',
        "dropped (`gemini/last_updated`); it does not make the held message final",
    ),
    Row(
        "set_messages",
        'chat: `{"$set": {"messages": [...]}}` (checkpoint)',
        "no lines (a replay, or history this file never recorded; dropped "
        "`gemini/checkpoint`); the `<session_context>` message's first workspace "
        "directory is the `cwd`; the open run's prompt not among its messages: the prompt "
        "was rolled back, the run's `result` is `error_during_execution`, `is_error`, "
        "`extension.rolled_back`",
    ),
    Row(
        "set_messages_rebuilt",
        'chat: `{"$set": {"messages": [...]}}` that rebuilds the history (compression: '
        "`/compress`, or automatic past `model.compressionThreshold`; new ids, a "
        "`<state_snapshot>` message)",
        "no lines (dropped `gemini/checkpoint`); the open run goes on: a prompt is rolled "
        "back only when the new history ends where it ended before that prompt (the CLI cuts "
        "it back to that length, ids kept), not when the prompt is there under a new id",
    ),
    Row("set_session", 'chat: `{"$set": {"sessionId"}}`', "the session id; no line"),
    Row(
        "set_other",
        'chat: `{"$set": {summary | memoryScratchpad | …}}`',
        "`system/notification` (`kind: set`), the values in `extension.$set`",
    ),
    Row(
        "rewind",
        'chat: `{"$rewindTo": id}`',
        "`system/notification` (`kind: rewind`, `id`); a run whose prompt it removes ends "
        "`interrupted` (`extension.rewound`)",
    ),
    Row(
        "user_prompt",
        "chat: `user` record with `text` parts (or a string: older files)",
        "opens a run (`system/init`: agent `gemini-cli`/`google`, `model` = its first "
        "reply's, `cwd`), then a `user` text line (`message.id` = `id`)",
    ),
    Row(
        "user_context",
        "chat: the `<session_context>` `user` message",
        "no line (dropped `gemini/session_context`); its workspace directory is the `cwd`",
    ),
    Row(
        "user_tool_copy",
        "chat: `user` record with a `functionResponse` part (beside it: an MCP image's "
        "`inlineData`, a file's text)",
        "no line (dropped `gemini/tool_response_copy`): the model-facing copy of results "
        "its `gemini` record holds (never a prompt: the CLI's own test)",
    ),
    Row(
        "gemini_history_copy",
        "chat: `gemini` record with parts as `content`, no `model`, `tokens` null (a history "
        "entry `setHistory` recorded, e.g. `/restore`'s checkpoint history)",
        "no line (dropped `gemini/history_copy`): no model call wrote it, it opens and ends no run",
    ),
    Row(
        "gemini_command_calls",
        "chat: `gemini` record with `toolCalls` and no `tokens`, no run open (`/restore` runs "
        "its checkpoint's call again)",
        "`system/notification` (`kind: command_tool_calls`; `extension.tools` = the names), "
        "the calls and results in `extension.toolCalls`: no model turn, no run",
    ),
    Row(
        "gemini",
        "chat: `gemini` record (last version by `id`)",
        "one `assistant` line: `thoughts[]` → `thinking` blocks (`**subject**\\n\\n"
        'description`), `content` → `text` ("" skipped), `toolCalls[]` → `tool_use` '
        "(`id`, `name`, `input` = `args`; `displayName`, `description`, … in the block's "
        "`extension`); `message.id` = `id`, `model`, usage from `tokens` (the usage rule); "
        "without tool calls it ends the run (`success`)",
    ),
    Row(
        "tool_call_result",
        "chat: `toolCalls[].result` / `status`",
        "a `user` `tool_result` line per call (`content` = `response.output`, or "
        "`response.error`; `is_error` = `status` error/cancelled or an `error`); "
        "`tool_use_result` = `{status, resultDisplay, agentId}`",
    ),
    Row(
        "tool_call_media",
        "chat: `toolCalls[].result` parts beside the `functionResponse` that are not text "
        "(an MCP tool's image: `inlineData`)",
        "kept in the `tool_result` block's `extension.parts`, as written (the `content` is the "
        "response's text)",
    ),
    Row(
        "parallel_calls",
        "chat: `toolCalls[]` with several calls; stream-json: several `tool_use` in a row",
        "one `assistant` line with a `tool_use` block per call, then one `user` `tool_result` "
        "line per call, in order",
    ),
    Row(
        "tool_call_agent",
        "chat: a `toolCalls[]` entry with `agentId` (`invoke_agent`)",
        "before its `tool_result`: `system/task_notification` (`task_id` = `agentId`, "
        "`task.tool_use_id` = the call's `id`, `extension.termination_reason` from the "
        "result's `Termination Reason:` line): the subagent's end, and the link a subagent "
        "file still waiting for its spawner learns",
    ),
    Row(
        "notice",
        "chat: `info` / `warning` / `error` message",
        "`system/notification`, `severity` = its type, `message` = its text",
    ),
    Row(
        "subagent",
        "chat: `chats/<session>/<agent id>.jsonl` (`kind: subagent`)",
        "lines of the parent's run, `parent_tool_use_id` = the parent's `toolCalls[].id` whose "
        "`agentId` names the file (a `system/task_started` first); no parent found: a "
        "nested actor named `agent-<id>`",
    ),
    Row(
        "stream_init",
        "stream-json: `init`",
        "`system/init` (`session_id`; `model` unless it is the alias `auto`, then "
        "`extension.model`)",
    ),
    Row("stream_user", "stream-json: `message` role `user`", "`user` text line"),
    Row(
        "stream_delta",
        "stream-json: `message` role `assistant`, `delta: true`",
        "joined: one `text` block per model call, in the call's one `assistant` line with "
        "its `tool_use` blocks",
    ),
    Row(
        "stream_tool_use",
        "stream-json: `tool_use`",
        "`tool_use` block (`id` = `tool_id`, `name` = `tool_name`, `input` = `parameters`)",
    ),
    Row(
        "stream_tool_result",
        "stream-json: `tool_result`",
        "`user` `tool_result` (`content` = `output` (the display text), else "
        "`error.message`; `is_error` = `status` error); `tool_use_result` = `status`, "
        "`error`",
    ),
    Row("stream_error", "stream-json: `error`", "`system/notification` with `severity`, `message`"),
    Row(
        "stream_result",
        "stream-json: `result`",
        "the run's `result`: `success`, or `error_during_execution` with `result` = "
        "`error.message`; `usage` and `model_usage` from `stats` (the usage rule; the router "
        "and subagents included), `duration_ms`, `num_turns` = model calls seen",
    ),
    Row(
        "document",
        "json: `{session_id, response, stats, error?}`",
        "one run: `system/init` (`model` = the model with a `main` role), an `assistant` "
        "text line (`response`), the `result` (`usage`/`model_usage` from "
        "`stats.models.*.tokens`, `num_turns` = the main role's `totalRequests`, `stats` "
        "whole in `extension`)",
    ),
    Row("unknown", "anything else", "`system/unrecognized`, kept whole"),
    Row(
        "bad_body",
        "a known record whose body does not fit (`tokens` not numbers, `toolCalls` not a list, …)",
        "`system/error` naming file:line, the record in `extension.record`; exit status 1",
    ),
)
