//! The consent dialog on Linux, drawn with GTK directly: rfd (what tauri-plugin-dialog uses)
//! makes its GTK message dialogs with no parent and no default button. This one is transient
//! for the main window and centred on it, modal, and its safe button ("Don't start", "Keep
//! asking"…) is both the default and focused, so Enter and Escape both say no. A long part of
//! the question (a command line, a tool's diff) is shown whole in a scrolled, selectable
//! monospace view, never as markup or a printf format; a diff's added and removed lines are
//! marked. Every string here is hostile text the core has already escaped.

use gtk::prelude::*;
use tauri::{AppHandle, Manager};

/// What a dialog asks: `title` (also the window's title, which the e2e tests look for), `lead`
/// (the question's text), an optional `detail` shown in a scrolled view, and `tail` under it.
pub struct Question {
    pub title: String,
    pub lead: String,
    pub detail: Option<Detail>,
    pub tail: Option<String>,
    /// The buttons: yes, then no (the safe one). `_` marks each one's mnemonic.
    pub buttons: (&'static str, &'static str),
}

pub struct Detail {
    pub text: String,
    /// A unified diff: lines starting with `+` and `-` are marked.
    pub diff: bool,
}

/// Shows `question` over the main window; `answer` gets whether the person said yes. Runs on
/// the main thread (GTK's); resolves `false` at once when the dialog cannot be made.
pub fn ask(app: &AppHandle, question: Question, answer: tokio::sync::oneshot::Sender<bool>) {
    let app = app.clone();
    let ran = app
        .clone()
        .run_on_main_thread(move || show(&app, question, answer));
    if let Err(e) = ran {
        tracing::error!(error = %e, "the consent dialog could not be shown");
    }
}

fn show(app: &AppHandle, question: Question, answer: tokio::sync::oneshot::Sender<bool>) {
    let parent = app
        .get_webview_window("main")
        .and_then(|window| window.gtk_window().ok());
    let dialog = gtk::MessageDialog::builder()
        .modal(true)
        .destroy_with_parent(true)
        .message_type(gtk::MessageType::Warning)
        .buttons(gtk::ButtonsType::None)
        .title(question.title.as_str())
        .text(question.title.as_str())
        .secondary_text(question.lead.as_str())
        .window_position(gtk::WindowPosition::CenterOnParent)
        .build();
    if let Some(parent) = &parent {
        dialog.set_transient_for(Some(parent));
    }
    let area = dialog.message_area().downcast::<gtk::Box>().ok();
    // The question's text starts where the detail does (GTK centres it in a narrower box), and
    // a long unbroken word in it (an address) wraps rather than stretch the dialog off screen.
    for (n, label) in area
        .iter()
        .flat_map(gtk::prelude::ContainerExt::children)
        .enumerate()
    {
        if let Ok(label) = label.downcast::<gtk::Label>() {
            label.set_line_wrap_mode(gtk::pango::WrapMode::WordChar);
            label.set_max_width_chars(70);
            if n > 0 {
                label.set_halign(gtk::Align::Fill);
                label.set_xalign(0.0);
            }
        }
    }
    if let (Some(area), Some(detail)) = (&area, &question.detail) {
        area.pack_start(&detail_view(detail), true, true, 0);
    }
    if let (Some(area), Some(tail)) = (&area, &question.tail) {
        let label = gtk::Label::new(Some(tail));
        label.set_line_wrap(true);
        label.set_line_wrap_mode(gtk::pango::WrapMode::WordChar);
        label.set_xalign(0.0);
        label.set_max_width_chars(70);
        label.set_selectable(true);
        area.pack_start(&label, false, false, 0);
    }
    let (yes, no) = question.buttons;
    let safe = dialog.add_button(no, gtk::ResponseType::Cancel);
    dialog.add_button(yes, gtk::ResponseType::Accept);
    dialog.set_default_response(gtk::ResponseType::Cancel);
    let answer = std::cell::Cell::new(Some(answer));
    dialog.connect_response(move |dialog, response| {
        if let Some(answer) = answer.take() {
            let _ = answer.send(response == gtk::ResponseType::Accept);
        }
        dialog.close();
    });
    dialog.show_all();
    safe.grab_focus();
}

/// The scrolled, read-only view of a long detail; a diff's lines marked by kind.
fn detail_view(detail: &Detail) -> gtk::ScrolledWindow {
    let buffer = gtk::TextBuffer::new(None::<&gtk::TextTagTable>);
    buffer.set_text(&detail.text);
    if detail.diff {
        let added = gtk::gdk::RGBA::new(0.18, 0.63, 0.26, 0.22);
        let removed = gtk::gdk::RGBA::new(0.97, 0.32, 0.29, 0.22);
        if let Some(tags) = buffer.tag_table() {
            for (name, colour) in [("added", added), ("removed", removed)] {
                tags.add(
                    &gtk::TextTag::builder()
                        .name(name)
                        .paragraph_background_rgba(&colour)
                        .build(),
                );
            }
        }
        // The `---`/`+++` header comes before the first hunk only: inside a hunk, a line that
        // starts `+++` is an added line whose own text starts `++`, and is marked as one.
        let mut in_hunk = false;
        for (n, line) in detail.text.lines().enumerate() {
            if line.starts_with("@@") {
                in_hunk = true;
                continue;
            }
            let tag = match line.as_bytes().first() {
                Some(b'+') if in_hunk => "added",
                Some(b'-') if in_hunk => "removed",
                _ => continue,
            };
            let Ok(n) = i32::try_from(n) else { break };
            let start = buffer.iter_at_line(n);
            let mut end = start;
            end.forward_to_line_end();
            buffer.apply_tag_by_name(tag, &start, &end);
        }
    }
    let view = gtk::TextView::with_buffer(&buffer);
    view.set_editable(false);
    view.set_cursor_visible(false);
    view.set_monospace(true);
    view.set_wrap_mode(gtk::WrapMode::WordChar);
    view.set_left_margin(8);
    view.set_right_margin(8);
    view.set_top_margin(6);
    view.set_bottom_margin(6);
    let scrolled = gtk::ScrolledWindow::new(None::<&gtk::Adjustment>, None::<&gtk::Adjustment>);
    scrolled.set_policy(gtk::PolicyType::Never, gtk::PolicyType::Automatic);
    scrolled.set_shadow_type(gtk::ShadowType::In);
    scrolled.set_min_content_width(560);
    scrolled.set_min_content_height(if detail.diff { 200 } else { 60 });
    scrolled.set_max_content_height(360);
    scrolled.set_propagate_natural_height(true);
    scrolled.add(&view);
    scrolled
}
