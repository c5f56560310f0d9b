//! The window's calls: the one invoke handler, which finds the core's command by name (Tauri
//! has checked the capability first) and runs it with a [`TauriHost`] — native dialogs, the
//! page's channels, drops and updates, answered by Tauri for the webview that called.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use switchboard_core::app::DropEvent;
use switchboard_core::ipc::{self, Cx, Host, RawSink, Sink};
use switchboard_core::policy::confirm::Confirm;
use switchboard_core::updates::{UpdateProgress, UpdateStatus};
use switchboard_core::IpcError;
use tauri::ipc::{Invoke, InvokeBody, InvokeError, InvokeResponseBody, JavaScriptChannelId};
use tauri::{AppHandle, Manager, Webview, Wry};

use crate::bridge::{self, NativeConfirm};
use crate::state::AppState;

/// Runs the window's call to one of the core's commands; `false` (Tauri then says the command
/// does not exist) for any other name.
pub fn handle(invoke: Invoke<Wry>) -> bool {
    let Some(command) = ipc::find(invoke.message.command()) else {
        return false;
    };
    let args = match invoke.message.payload() {
        InvokeBody::Json(args) => args.clone(),
        InvokeBody::Raw(_) => serde_json::Value::Null,
    };
    let webview = invoke.message.webview();
    invoke.resolver.respond_async_serialized(async move {
        let handle = webview.app_handle().clone();
        let app = Arc::clone(handle.state::<AppState>().app().await);
        let cx = Cx {
            app,
            window: webview.window().label().to_owned(),
            host: Arc::new(TauriHost { handle, webview }),
        };
        command
            .run(cx, args)
            .await
            .map(InvokeResponseBody::Json)
            .map_err(|e| InvokeError(serde_json::to_value(e).unwrap_or_default()))
    });
    true
}

/// The host of one call: the app and the webview that made it.
struct TauriHost {
    handle: AppHandle,
    webview: Webview,
}

#[async_trait::async_trait]
impl Host for TauriHost {
    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    fn confirm(&self) -> Arc<dyn Confirm> {
        Arc::new(NativeConfirm(self.handle.clone()))
    }

    fn channel(&self, id: &str) -> Option<RawSink> {
        let channel = JavaScriptChannelId::from_str(id)
            .ok()?
            .channel_on::<Wry, InvokeResponseBody>(self.webview.clone());
        Some(Arc::new(move |text| {
            channel.send(InvokeResponseBody::Json(text)).is_ok()
        }))
    }

    async fn choose_file(
        &self,
        title: &str,
        save: Option<&str>,
        filter: (&str, &str),
    ) -> Option<PathBuf> {
        bridge::choose_file(&self.handle, title, save, filter).await
    }

    async fn choose_files(&self, title: &str) -> Vec<PathBuf> {
        bridge::choose_files(&self.handle, title).await
    }

    async fn choose_folder(&self, title: &str) -> Option<PathBuf> {
        bridge::choose_folder(&self.handle, title).await
    }

    fn listen_for_drops(&self, sink: Sink<DropEvent>) {
        self.handle.state::<AppState>().listen_for_drops(sink);
    }

    async fn check_for_update(&self) -> Result<UpdateStatus, IpcError> {
        crate::updates::check(&self.handle).await
    }

    async fn install_update(&self, progress: Sink<UpdateProgress>) -> Result<String, IpcError> {
        crate::updates::install(&self.handle, progress).await
    }

    fn restart(&self) {
        crate::updates::restart(&self.handle);
    }

    fn quit(&self) {
        self.handle.exit(0);
    }
}
