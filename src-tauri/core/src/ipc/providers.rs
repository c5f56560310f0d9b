//! Provider commands. A key arrives as a [`Secret`] and goes straight to the keychain; no
//! command ever returns one.

use super::{commands, Secret, Sink};
use crate::app::{ConnectionReport, LocalServer, NewProvider, PullProgress, ToolModeChoice};
use crate::provider_config::{Preset, Provider, ProviderKind, ProviderKindInfo, PRESETS};
use crate::providers::{ModelInfo, ToolMode};
use crate::store::ModelWindow;

commands! {
    async fn list_provider_kinds(cx) -> Vec<ProviderKindInfo> {
        Ok(ProviderKind::ALL.iter().map(|k| k.info()).collect())
    }

    async fn list_provider_presets(cx) -> Vec<Preset> {
        Ok(PRESETS.to_vec())
    }

    /// Resolves with a report even when the connection failed; rejects only when there is
    /// nothing to test.
    async fn test_provider(cx, name: String) -> ConnectionReport {
        Ok(cx.app.providers().test(&name).await?)
    }

    async fn list_models(cx, name: String) -> Vec<ModelInfo> {
        Ok(cx.app.providers().models(&name).await?)
    }

    async fn detect_local_providers(cx) -> Vec<LocalServer> {
        Ok(cx.app.providers().detect_local().await)
    }

    async fn list_providers(cx) -> Vec<Provider> {
        Ok(cx.app.providers().list().await?)
    }

    async fn add_provider(cx, provider: NewProvider) -> Provider {
        Ok(cx.app.providers().add(provider).await?)
    }

    async fn update_provider(cx, name: String, base_url: Option<String>, default_model: Option<String>) -> Provider {
        Ok(cx
            .app
            .providers().update(&name, base_url.as_deref(), default_model.as_deref())
            .await?)
    }

    async fn set_provider_key(cx, name: String, api_key: Secret) -> Provider {
        Ok(cx.app.providers().set_key(&name, api_key.0).await?)
    }

    async fn delete_provider_key(cx, name: String) -> Provider {
        Ok(cx.app.providers().delete_key(&name).await?)
    }

    /// Also removes the provider's key from the keychain.
    async fn remove_provider(cx, name: String) -> () {
        Ok(cx.app.remove_provider(&name).await?)
    }

    /// The model's window in tokens and whose word it is; `null` when nothing knows it.
    async fn get_model_window(cx, provider: String, model: String) -> Option<ModelWindow> {
        Ok(cx.app.providers().window(&provider, &model).await?)
    }

    /// Sets the person's window for the model; `null` forgets it (and one learned from a
    /// refusal). The window that counts now.
    async fn set_model_window(cx, provider: String, model: String, tokens: Option<u64>) -> Option<ModelWindow> {
        Ok(cx.app.providers().set_window(&provider, &model, tokens).await?)
    }

    /// How the model is given tools (native, prompted, off), and whose word that is.
    async fn model_tool_mode(cx, provider: String, model: String) -> ToolModeChoice {
        Ok(cx.app.providers().tool_mode(&provider, &model).await?)
    }

    /// Sets how the model is given tools; `null` forgets the person's word. What applies now.
    async fn set_model_tool_mode(cx, provider: String, model: String, mode: Option<ToolMode>) -> ToolModeChoice {
        Ok(cx.app.providers().set_tool_mode(&provider, &model, mode).await?)
    }

    /// Fetches a model onto a local provider's machine (Ollama), sending each step to
    /// `on_progress`; resolves once the model is there. `cancel_model_pull` stops it (it
    /// rejects then, as cancelled); so does a page that stops listening. The provider's models
    /// listed again (`null` when they could not be).
    async fn pull_model(cx, provider: String, model: String, on_progress: Sink<PullProgress>) -> Option<Vec<ModelInfo>> {
        let providers = cx.app.providers().clone();
        let (named, wanted) = (provider.clone(), model.clone());
        Ok(cx
            .app
            .providers()
            .pull_model(&provider, &model, move |step| {
                if !on_progress.send(step) {
                    providers.cancel_pull(&named, &wanted);
                }
            })
            .await?)
    }

    /// Stops a model's download; `false` when none is running.
    async fn cancel_model_pull(cx, provider: String, model: String) -> bool {
        Ok(cx.app.providers().cancel_pull(&provider, &model))
    }

    /// Deletes an installed model from a local provider's machine (Ollama).
    async fn remove_model(cx, provider: String, model: String) -> () {
        Ok(cx.app.providers().remove_model(&provider, &model).await?)
    }
}
