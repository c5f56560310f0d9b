//! Build script: tauri-build reads tauri.conf.json from the package root and generates the
//! permission set for the app's own commands, which the capability in
//! `src-tauri/capabilities/` grants to the main window — and nothing else.

const COMMANDS: &[&str] = &[
    "app_status",
    "keychain_status",
    "list_conversations",
    "create_conversation",
    "rename_conversation",
    "set_system_prompt",
    "delete_conversation",
    "get_conversation",
    "get_older_messages",
    "get_message_text",
    "get_tool_result_view",
    "list_provider_kinds",
    "list_providers",
    "add_provider",
    "update_provider",
    "set_provider_key",
    "delete_provider_key",
    "remove_provider",
    "get_settings",
    "update_settings",
    "list_provider_presets",
    "test_provider",
    "list_models",
    "detect_local_providers",
    "set_conversation_model",
    "list_mcp_servers",
    "watch_mcp_servers",
    "approve_mcp_server",
    "set_mcp_server_enabled",
    "restart_mcp_server",
    "remove_mcp_server",
    "add_mcp_server",
    "mcp_server_log",
    "preview_mcp_import",
    "import_mcp_servers",
    "edit_mcp_server",
    "list_mcp_tools",
    "accept_mcp_tool",
    "sign_in_mcp_server",
    "sign_out_mcp_server",
    "watch_mcp_forms",
    "answer_mcp_form",
    "send_message",
    "retry_tool_call",
    "stop_run",
    "attach_run",
    "answer_approval",
    "list_conversation_tools",
    "set_conversation_tool",
    "set_auto_approve",
    "list_tool_approvals",
    "allow_tool_always",
    "revoke_tool_approval",
    "set_default_tools",
    "open_link",
];

fn main() {
    let attributes = tauri_build::Attributes::new()
        .capabilities_path_pattern("./src-tauri/capabilities/**/*")
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    tauri_build::try_build(attributes).expect("tauri-build failed");
}
