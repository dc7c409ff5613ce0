"""What each Codex record type becomes: the ``codex`` source's mapping table.

docs/mapping.md is made from it (``python -m streamv1.translator.reading.mapping``) and
tests/test_mapping_tables.py tries one example per row key. Apart from the adapter
because it is data, read by the docs and the tests; the adapter's ``SOURCE``
carries it.
"""

from __future__ import annotations

from streamv1.translator.reading.mapping import Row

MAPPING = (
    Row(
        "session_meta",
        "rollout `session_meta`",
        "the init's session id (`session_id`: the root thread; `id` is the thread), "
        "`cwd`, the rest in the init's `extension` (`cli_version`, `originator`, `source`, "
        "`git`, …; `base_instructions` dropped on purpose: the system prompt's text)",
    ),
    Row(
        "turn_context",
        "`turn_context`",
        "the init's `agent.model` (and every assistant line's model, for `model_usage`), "
        "`cwd`; `approval_policy`, `sandbox_policy`, `effort`, `summary` in "
        "`extension.turn_context`; counted as dropped",
    ),
    Row(
        "additional_tools",
        "`response_item/additional_tools`",
        "the init's `tools`: `namespace.name` per tool of each namespace (the catalogue "
        "itself dropped on purpose)",
    ),
    Row("task_started", "`event_msg/task_started`", "a run begins: its `system/init`"),
    Row(
        "user_message",
        "`item_completed/UserMessage` (older: `event_msg/user_message`)",
        "`user` text: the typed prompt",
    ),
    Row(
        "history_user",
        "`response_item/message` role `user` / `developer`",
        "dropped on purpose (the model-facing history: instructions, `<environment_context>`, "
        "the prompt again); in a file with no prompt events, a user message that is not "
        "context is the prompt",
    ),
    Row(
        "assistant",
        "`response_item/message` role `assistant`",
        "`assistant` text blocks; `phase` (commentary, final_answer) in the line's "
        "`extension`. The items of one model response are one assistant line",
    ),
    Row(
        "reasoning",
        "`response_item/reasoning`",
        "a `thinking` block: the `summary` texts (joined by a blank line); "
        "`encrypted_content` in the block's `extension`",
    ),
    Row(
        "function_call",
        "`response_item/function_call`",
        "`tool_use`: `id` = `call_id`, `name` = `namespace.name` (or `name`), `input` = the "
        "parsed `arguments` (`{arguments: <text>}` when they are no JSON object)",
    ),
    Row(
        "custom_tool_call",
        "`response_item/custom_tool_call`",
        "`tool_use`: `input` = `{input: <freeform text>}` (code mode's `functions.exec`: "
        "its JavaScript)",
    ),
    Row(
        "local_shell_call",
        "`response_item/local_shell_call` (older)",
        "`tool_use` `local_shell`, `input` = its `action`",
    ),
    Row(
        "parallel_calls",
        "several `function_call` / `custom_tool_call` items in one model response "
        "(parallel direct calls)",
        "one assistant line with a `tool_use` each (in the response's order), its usage "
        "once; each output its own `tool_result` line by `call_id`, in the order written",
    ),
    Row(
        "web_search",
        "`response_item/web_search_call` (a search the model's server ran), with the "
        "`item_completed/WebSearch` of its id written before it",
        "a `tool_use` `web_search` in the response's assistant line (id = the item's "
        "`id`; input = the WebSearch item's `query` and `action`, else `{action}`) and, "
        "after that line, its `tool_result` (content empty: the results reach only the "
        "model; `is_error` from `status`; `status` in `tool_use_result`); the WebSearch "
        "item counted as dropped",
    ),
    Row(
        "tool_search",
        "`response_item/tool_search_call` / `tool_search_output` (deferred tool search)",
        "`tool_use` `tool_search` (input = the parsed `arguments`) and its `tool_result` "
        "by `call_id` (an output without one: the oldest search open): `content` = the "
        "found `tools` as JSON text, `status`, `execution`, `tools` in `tool_use_result`",
    ),
    Row(
        "context_output",
        "`response_item/function_call_output` with no `call_id` (context the CLI adds "
        "for the model: a goal's `goal_objective`)",
        "dropped on purpose (no call's answer; the goal is in `create_goal`'s call and "
        "output), counted as `…/no_call_id`",
    ),
    Row(
        "patch_refused",
        "a direct `apply_patch` call's output with no `FileChange` item of its id, in a "
        "file that writes `item_completed` items (plain text `apply_patch verification "
        "failed: …`)",
        "its `tool_result` has `is_error: true`: the patch was refused before it ran "
        "(every patch that runs has its FileChange; an older file writes no items)",
    ),
    Row(
        "token_usage_record",
        "`token_usage_record`",
        "the response's usage, once per API call, on its assistant line (`message.id` = "
        "`response_id`); they add up into the result's `usage`; `num_turns` counts them",
    ),
    Row(
        "call_output",
        "`response_item/function_call_output`, `custom_tool_call_output`, "
        "`local_shell_call_output`",
        "`user` `tool_result` by `call_id`: `content` = the output text; `is_error` where "
        "the output or the call's execution item says it (`Script failed`, exit code ≠ 0, "
        "status failed); the direct tool's execution item in `tool_use_result`",
    ),
    Row(
        "nested_execution",
        "`item_completed/CommandExecution` / `FileChange` / `McpToolCall` inside an `exec` call",
        "a `tool_use` (`command_execution`, `file_change`, `mcp_tool_call`; id = the item "
        "id) and its `tool_result` (`aggregated_output`, `is_error` from status/exit "
        "code), both with `parent_tool_use_id` = the exec call; the item's other fields "
        "(`status`, `exit_code`, `duration`, `parsed_cmd`, …) in `tool_use_result`",
    ),
    Row(
        "direct_execution",
        "an execution item whose id is a call's (`CommandExecution`, "
        "`FileChange`, `CollabAgentToolCall`)",
        "its fields are the call's `tool_result`'s `tool_use_result`; counted as dropped",
    ),
    Row(
        "repeats",
        "`item_completed/AgentMessage`, `Reasoning`; `event_msg/token_count` "
        "beside `token_usage_record`; older `event_msg/agent_message`, `agent_reasoning`",
        "dropped on purpose: they repeat a response item or a usage record",
    ),
    Row(
        "legacy_usage",
        "`event_msg/token_count` in a file without `token_usage_record`",
        "the usage of a call: `info.last_token_usage`, once per change of `info.total_token_usage`",
    ),
    Row(
        "task_complete",
        "`event_msg/task_complete`",
        "the run's one `result`: `success`, or `error_during_execution` (`is_error`) when "
        "`error` is set; `result` = `last_agent_message` (the error's message on failure); "
        "`duration_ms`, `ttft_ms` = `time_to_first_token_ms`; `usage` = Σ the run's "
        "usage records",
    ),
    Row(
        "turn_aborted",
        "`event_msg/turn_aborted` (an interrupted turn)",
        "the run's `interrupted` result (`is_error`), `stop_reason` = `reason`, "
        "`duration_ms` when given; `turn_id`, times in `extension`",
    ),
    Row(
        "continuation_aborted",
        "a `task_started` whose `turn_attribution.parent_turn_id` names an earlier turn "
        "(the CLI's own continuation: `turn_trigger` goal) ended by `turn_aborted` "
        "before any line or model call (`codex exec` exits after its own turn)",
        "no run: dropped on purpose, counted as `event_msg/turn_aborted/continuation` "
        "(exec --json prints no turn for it either)",
    ),
    Row(
        "killed",
        "a rollout that ends inside a run (no `task_complete`)",
        "a synthetic `interrupted` result (`is_error`), usage what the records sum to; in "
        "an older file without `task_started`: `success` when the model had the last word "
        "and every call was answered",
    ),
    Row(
        "subagent_spawn",
        "`item_completed/SubAgentActivity` `started`",
        "the spawning call of a child thread (the child's lines get it as "
        "`parent_tool_use_id`); counted as dropped",
    ),
    Row(
        "subagent_done",
        "`item_completed/SubAgentActivity` `completed`",
        "`system/task_notification`: `task_id` = the child thread, `status`, "
        "`task.tool_use_id` = the spawning call",
    ),
    Row(
        "child_rollout",
        "a child thread's rollout (`session_meta.parent_thread_id`)",
        "its runs are a nested actor inside the parent's run: `system/task_started` "
        "(`task_id` = its thread), every line with `parent_tool_use_id` = the spawning "
        "call; its end is no line",
    ),
    Row(
        "review",
        "`item_completed/EnteredReviewMode` (`codex exec review`, `/review`)",
        "the review's call: an assistant `tool_use` `review` (id = the item's `id`, "
        "input = its `target`, `user_facing_hint`), which begins the run if none is "
        "open (its `turn_id`); the review's child thread (`source.subagent: review`, "
        "no spawning call) is nested under it, found by the parent's mirrored items of "
        "the child's thread",
    ),
    Row(
        "review_done",
        "`item_completed/ExitedReviewMode`",
        "the review call's `tool_result`: `content` = `review_output.overall_explanation`, "
        "the item (findings, verdict) in `tool_use_result`; the CLI's formatted review "
        "follows as assistant text (the `<user_action>` history message is context)",
    ),
    Row(
        "mirrored_child",
        "in a review's parent rollout: `item_completed` of another `thread_id`, a "
        "`task_started` whose `turn_attribution.parent_turn_id` is the open run's turn, "
        "the `task_complete` of that turn",
        "dropped on purpose, counted (`…/other_thread`, `…/child_turn`): the child's "
        "own rollout has them",
    ),
    Row(
        "no_call_run",
        "a `task_complete` (no error) ending a run with no `token_usage_record`, in a "
        "rollout whose records carry `ordinal`",
        "the result's `usage` is zero and `num_turns` 0 (that CLI writes a record for "
        "every model call: a review's parent turn makes none; exec --json says 0 too)",
    ),
    Row(
        "prompt_image",
        "`item_completed/UserMessage` content parts other than text (`local_image` "
        "from `-i`, `image`)",
        "kept in the prompt's `user` line as blocks of their own type, the part's "
        "fields in the block's `extension` (the image data itself is only in the "
        "model-facing history message, dropped)",
    ),
    Row(
        "fork",
        "a forked thread's rollout (`codex exec fork`, `session_meta.forked_from_id`; it "
        "holds only the fork's own records)",
        "a session of its own (its thread), `forked_from_id` in the init's `extension`; "
        "its usage is its own calls. exec --json: the fork's first `turn.completed` "
        "total starts at the parent's and `thread.started` does not say it is a fork, "
        "so that run's usage is the total taken whole (cannot know; the rollout can)",
    ),
    Row(
        "agent_message",
        "`response_item/agent_message` (mail between agents)",
        "`user` text (the `input_text` parts); `author`, `recipient`, other parts in `extension`",
    ),
    Row(
        "configuration_update",
        "`response_item/configuration_update`",
        "`system/warning` (`kind` configuration_update), the record in `extension`",
    ),
    Row(
        "metadata",
        "`world_state`, `event_msg/thread_settings_applied`, "
        "`inter_agent_communication_metadata`; the bare format's `{record_type: state}`",
        "dropped on purpose, counted",
    ),
    Row(
        "bare_format",
        "the bare format: a header `{id, timestamp, instructions, git}` then bare items",
        "the header is a `session_meta`; bare `message`, `reasoning`, `*_call`, "
        "`*_call_output` are response items",
    ),
    Row("exec_thread", "exec `thread.started`", "the session id (`thread_id`)"),
    Row(
        "exec_turn",
        "exec `turn.started`",
        "a run begins (no model, cwd or tools: this view does not say them)",
    ),
    Row(
        "exec_text",
        "exec `item.completed` `agent_message` / `reasoning`",
        "`assistant` text / `thinking`",
    ),
    Row(
        "exec_tool",
        "exec `item.started` / `item.completed` of `command_execution`, "
        "`file_change`, `mcp_tool_call`, `collab_tool_call`, `web_search`",
        "`tool_use` (id = the item id, name = its type, input = its other fields) and its "
        "`tool_result` (`aggregated_output`; `is_error` from status failed/declined or "
        "exit code ≠ 0; status, exit code, changes in `tool_use_result`); a review's "
        "child thread's items come as the thread's own (this view does not nest them)",
    ),
    Row(
        "exec_completed",
        "exec `turn.completed`",
        "the run's `success` result; `usage` = this total minus the previous "
        "`turn.completed` of the thread in the stream (the first: taken whole); the raw "
        "total in `extension.thread_usage`",
    ),
    Row(
        "exec_failed",
        "exec `turn.failed`",
        "`error_during_execution` result, `result` = `error.message`",
    ),
    Row(
        "exec_error",
        "exec `error`, `item.completed` `error`",
        "`system/warning` with the `message` (retries, the transport fallback)",
    ),
    Row(
        "unknown",
        "anything else",
        "`system/unrecognized` (`kind` = its type, the record whole in "
        "`extension.record`); never an error",
    ),
    Row(
        "bad_body",
        "a known type whose body does not fit (`payload` no object, no "
        "`call_id`, tokens not whole numbers, …)",
        "`system/error` naming file:line, the record in `extension.record`; exit status 1",
    ),
)
