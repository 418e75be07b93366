"""Every public surface, pinned: the top level and each subpackage export exactly these names.

A change here is a change of the public API: make it on purpose. Internals (windowing,
renderers, messages, argument checks, the providers' system-call modules) live in private
`_name.py` modules and are not listed.
"""

from __future__ import annotations

import importlib
import sys

import pytest

import dsh_fs

SURFACES: dict[str, list[str]] = {
    "dsh_fs": [
        "Approval",
        "FsError",
        "FsErrorCode",
        "Proposal",
        "Rules",
        "Session",
        "ToolResult",
        "Workspace",
        "__version__",
    ],
    "dsh_fs.errors": [
        "FsError",
        "FsErrorCode",
        "ToolErrorCode",
    ],
    "dsh_fs.runtime": [
        "AgentSession",
        "Context",
        "Dispose",
        "EventBus",
        "Next",
        "Plugin",
        "PluginHandle",
        "PluginScope",
        "ProgressReporter",
        "PromptRegistry",
        "PromptSection",
        "ServiceKey",
        "Signal",
        "Tool",
        "ToolAnnotations",
        "ToolArgumentError",
        "ToolError",
        "ToolExecution",
        "ToolRegistry",
        "ToolResult",
        "Waterfall",
        "WaterfallListener",
        "parse_json",
    ],
    "dsh_fs.fs": [
        "BEFORE_LIMIT",
        "DEFAULT_PROTECT",
        "ENTRY_ID",
        "FS",
        "FS_CHANGE_INTENT",
        "FS_DELETE_INTENT",
        "FS_EDIT_INTENT",
        "FS_FORGET",
        "FS_MOVE_INTENT",
        "FS_OBSERVED",
        "FS_SETTLE",
        "FS_WRITE_INTENT",
        "PRIMITIVES",
        "SET_RECORDS",
        "UTF8",
        "VCS_DIRECTORIES",
        "Absent",
        "ChangeKind",
        "CreateIfAbsent",
        "EncodedText",
        "EncodingRules",
        "Encodings",
        "FenceOut",
        "FileSystem",
        "FsAccess",
        "FsCapabilities",
        "FsCapture",
        "FsChangeMeta",
        "FsChangeStart",
        "FsDecoded",
        "FsDeleteOutcome",
        "FsDirEntry",
        "FsDirListing",
        "FsEdit",
        "FsEditOutcome",
        "FsEditRequest",
        "FsEncoding",
        "FsError",
        "FsErrorCode",
        "FsFileType",
        "FsForget",
        "FsGlobQuery",
        "FsGrepHit",
        "FsGrepQuery",
        "FsInfo",
        "FsInsertRequest",
        "FsIntent",
        "FsMkdirOutcome",
        "FsMoveOutcome",
        "FsObserved",
        "FsPatchHunk",
        "FsPatchRequest",
        "FsPathInfo",
        "FsPreImage",
        "FsPrimitive",
        "FsSettle",
        "FsTarget",
        "FsTargetKey",
        "FsTextChunk",
        "FsTextStream",
        "FsTouch",
        "FsVersion",
        "FsWalkEntry",
        "FsWriteOutcome",
        "JournalEntry",
        "JournalProblem",
        "JournalStore",
        "JournalUsage",
        "LedgerUnreachable",
        "NativeSearchAbandoned",
        "Observation",
        "ObservationLedger",
        "PatchOp",
        "PathRules",
        "Present",
        "ReplaceIfVersion",
        "RuleMatch",
        "Rules",
        "SetFileRecord",
        "SetRecord",
        "SetRecords",
        "WrapperFileSystem",
        "WriteGuard",
        "apply_change",
        "apply_delta",
        "apply_edit",
        "apply_edit_encoded",
        "bom_encoding",
        "canonical_codec",
        "delete_dir_journaled",
        "forward_delta",
        "journal_codec",
        "line_counts",
        "proven_text",
        "transcoded_utf8",
        "utf16_as_utf8",
    ],
    "dsh_fs.fs.diagnosis": [
        "Diagnosis",
        "diagnose_ambiguous",
        "diagnose_block",
        "diagnose_not_found",
    ],
    "dsh_fs.providers": [
        "FsspecFileSystem",
        "LocalFileSystem",
        "LocalGuards",
        "LocalJournalStore",
        "LocalSetRecords",
        "PendingAnswer",
        "PendingApprovals",
        "RedisLedger",
        "RuledFileSystem",
        "SandboxFileSystem",
        "SandboxMode",
        "default_journal_location",
    ],
    "dsh_fs.journal": [
        "DEFAULT_MAX_AGE_SECONDS",
        "DEFAULT_MAX_BYTES",
        "DIFF_LIMIT",
        "SHORT_ID",
        "HunkResult",
        "Journal",
        "JournalConfig",
        "JournalPlugin",
        "UndoResult",
        "parse_since",
        "printable",
        "session_label",
    ],
    "dsh_fs.providers.local": [
        "LocalFileSystem",
        "LocalGuards",
        "LocalJournalStore",
        "LocalSetRecords",
        "PendingAnswer",
        "PendingApprovals",
        "default_journal_location",
        "default_set_records_location",
        "real_path",
        "set_records_directory",
        "still_real",
    ],
    "dsh_fs.providers.fsspec": [
        "FsspecFileSystem",
    ],
    "dsh_fs.providers.sandbox": [
        "SandboxFileSystem",
        "SandboxMode",
    ],
    "dsh_fs.policy": [
        "MemoryLedger",
        "ObservationPolicy",
        "RulesPlugin",
    ],
    "dsh_fs.tools": [
        "DEFAULT_APPROVE_TIMEOUT",
        "IMAGE_FORMATS",
        "JS_SPACE",
        "MANAGEMENT_TOOLS",
        "MAX_IMAGE_BYTES",
        "MAX_SET_BYTES",
        "REMEDIES",
        "Approval",
        "ApprovalGate",
        "ApproveMode",
        "Approver",
        "ApprovingFileSystem",
        "ChangeSet",
        "DeleteFileTool",
        "DeleteTool",
        "DeleteValue",
        "DialectGrants",
        "DialectOperation",
        "DialectToolsPlugin",
        "EditFilesTool",
        "EditFilesValue",
        "EditTool",
        "EditValue",
        "EditedFile",
        "FileManagementPlugin",
        "FsTool",
        "FsToolsPlugin",
        "ImageValue",
        "InsertTool",
        "JsonType",
        "MkdirTool",
        "MkdirValue",
        "MoveTool",
        "MoveValue",
        "Param",
        "PatchFilesTool",
        "PatchTool",
        "Proposal",
        "ProposedChange",
        "ReadTool",
        "ReadValue",
        "SetRecovery",
        "WriteTool",
        "WriteValue",
        "apply_proposal",
        "capture_for",
        "check_shape",
        "guarded_edit",
        "is_blank",
        "js_number",
        "message_with_remedy",
        "non_blank",
        "object_schema",
        "observe",
        "positive_integer",
        "recover_sets",
        "render_edit",
        "render_read",
        "render_write",
        "session_cwd",
        "string_param",
        "workspace_id",
    ],
    "dsh_fs.tools.paging": [
        "MAX_BYTES",
        "MAX_LINES",
        "MAX_LINE_CHARS",
        "LineIndexes",
        "LineWindow",
        "Window",
        "scan_window",
    ],
    "dsh_fs.discovery": [
        "DiscoveryConfig",
        "DiscoveryPlugin",
        "GlobTool",
        "GlobValue",
        "GrepMatch",
        "GrepTool",
        "GrepValue",
        "ListEntry",
        "ListTool",
        "ListValue",
    ],
    "dsh_fs.workspace": [
        "ALL_TOOLS",
        "ApproveOption",
        "JournalOption",
        "Session",
        "Workspace",
    ],
    "dsh_fs.adapters": [
        "AnthropicTool",
        "AnthropicToolResult",
        "ApplyPatchCallOutput",
        "EditorOutcome",
        "FunctionCallOutput",
        "OpenAIFunction",
        "OpenAITool",
        "OpenAIToolMessage",
        "PatchOutcome",
        "ResponsesFunctionTool",
        "SyncJournal",
        "SyncSession",
        "SyncWorkspace",
        "TextEditorTool",
        "WorkspaceBackend",
        "WorkspaceEditor",
        "WorkspaceToolset",
        "agents_tools",
        "anthropic_tool_results",
        "anthropic_tools",
        "execute_openai_response",
        "execute_openai_tool_calls",
        "langchain_tools",
        "openai_responses_tools",
        "openai_tools",
        "run_apply_patch",
        "run_text_editor",
    ],
    "dsh_fs.mcp": [
        "CODE_META_KEY",
        "ERROR_META_KEY",
        "HttpLimits",
        "bind_socket",
        "call_tool_result",
        "create_server",
        "is_loopback",
        "mcp_tools",
        "serve_http",
        "serve_stdio",
    ],
    "dsh_fs.mcp.stdio": [
        "serve_stdio",
    ],
    "dsh_fs.mcp.http": [
        "HttpLimits",
        "bind_socket",
        "http_security",
        "is_loopback",
        "serve_http",
    ],
    "dsh_fs.review": [
        "TOKEN_HEADER",
        "Review",
        "ReviewSource",
        "review_app",
        "review_url",
        "serve_review",
    ],
    "dsh_fs.cli": [
        "main",
    ],
}


# Frameworks whose extras install nothing on Python 3.10 (their adapters load on first use).
NEEDS_PYTHON_3_11 = {"deepagents", "langchain_core", "pydantic_ai"}


@pytest.mark.parametrize("module", sorted(SURFACES))
def test_each_public_surface_is_pinned(module: str) -> None:
    assert importlib.import_module(module).__all__ == SURFACES[module]


@pytest.mark.parametrize("module", sorted(SURFACES))
def test_every_exported_name_is_defined(module: str) -> None:
    imported = importlib.import_module(module)
    for name in imported.__all__:
        missing = refusal = ""
        try:
            value = getattr(imported, name)
        except ModuleNotFoundError as exc:  # an adapter whose framework needs a newer Python
            missing = (exc.name or "").split(".")[0]
        except ImportError as exc:  # the adapter says so itself (`adapters._NEEDS_3_11`)
            refusal = str(exc)
        if refusal:
            assert sys.version_info < (3, 11), refusal
            assert "needs Python 3.11+" in refusal, refusal
            continue
        if missing:
            assert sys.version_info < (3, 11), missing
            assert missing in NEEDS_PYTHON_3_11, missing
            continue
        assert value is not None, f"{module}.{name}"


def test_the_lower_level_pieces_compose_a_stack() -> None:
    from dsh_fs.policy import ObservationPolicy
    from dsh_fs.providers import LocalFileSystem
    from dsh_fs.runtime import Context
    from dsh_fs.tools import FsToolsPlugin

    assert ObservationPolicy.name == "fs-observation-policy"
    assert FsToolsPlugin.name == "fs-tools"
    assert callable(LocalFileSystem)
    assert callable(Context)
    assert dsh_fs.__version__
