//! The prompted tool protocol: calls found in streamed text however it is cut, never in code,
//! malformed ones answered with a correction, and the history written back as text.

use super::*;

/// [`parsed_with_ids`] with each call's id cut to its place in the answer ("1", "2", …): the
/// rest is this parser's own.
fn parsed(chunks: &[&str]) -> Vec<Piece> {
    let mut pieces = parsed_with_ids(chunks);
    for piece in &mut pieces {
        if let Piece::Call(c) = piece {
            c.id = c.id.rsplit('_').next().unwrap().to_owned();
        }
    }
    pieces
}

/// The pieces of `text` given to a parser in `chunks`, with adjacent texts joined (where a
/// chunk ends is not a piece of the answer).
fn parsed_with_ids(chunks: &[&str]) -> Vec<Piece> {
    let mut parser = CallParser::new();
    let mut all = Vec::new();
    for chunk in chunks {
        all.extend(parser.push(chunk));
    }
    all.extend(parser.finish());
    let mut joined: Vec<Piece> = Vec::new();
    for piece in all {
        match (joined.last_mut(), piece) {
            (Some(Piece::Text(before)), Piece::Text(more)) => before.push_str(&more),
            (_, piece) => joined.push(piece),
        }
    }
    joined
}

/// `text` cut at every place into two chunks, and into one chunk per character: each gives
/// the same pieces as the whole.
fn same_however_cut(text: &str) -> Vec<Piece> {
    let whole = parsed(&[text]);
    for (at, _) in text.char_indices().skip(1) {
        assert_eq!(parsed(&[&text[..at], &text[at..]]), whole, "cut at {at}");
    }
    let chars: Vec<String> = text.chars().map(String::from).collect();
    let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(parsed(&refs), whole, "one character at a time");
    whole
}

fn call(name: &str, arguments: Value) -> (String, Value) {
    (name.to_owned(), arguments)
}

fn calls(pieces: &[Piece]) -> Vec<(String, Value)> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Call(c) => Some(call(&c.name, c.arguments.clone().unwrap_or(Value::Null))),
            Piece::Text(_) => None,
        })
        .collect()
}

fn text(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(t.as_str()),
            Piece::Call(_) => None,
        })
        .collect()
}

#[test]
fn a_call_is_taken_out_of_the_text_however_the_stream_cuts_it() {
    let written =
        "Let me add them.\n<tool_call>{\"name\": \"get_sum\", \"arguments\": {\"a\": 2, \"b\": 3}}</tool_call>";
    let pieces = same_however_cut(written);
    assert_eq!(text(&pieces), "Let me add them.\n");
    assert_eq!(
        calls(&pieces),
        vec![call("get_sum", json!({"a": 2, "b": 3}))]
    );
    // Each answer's calls have ids of their own (a later read_result names one).
    let ids = |pieces: Vec<Piece>| -> Vec<String> {
        pieces
            .into_iter()
            .filter_map(|p| match p {
                Piece::Call(c) => Some(c.id),
                Piece::Text(_) => None,
            })
            .collect()
    };
    let first = ids(parsed_with_ids(&[written]));
    let again = ids(parsed_with_ids(&[written]));
    assert!(
        first[0].starts_with("call_") && first[0].ends_with("_1"),
        "{first:?}"
    );
    assert_ne!(first, again);
    let two = ids(parsed_with_ids(&[written, written]));
    assert_eq!(
        two[0].trim_end_matches("_1"),
        two[1].trim_end_matches("_2"),
        "{two:?}"
    );
}

#[test]
fn several_calls_in_tags_or_in_one_array_each_get_their_own_id() {
    let pieces = same_however_cut(
        "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": 1}}\n</tool_call>",
    );
    assert_eq!(
        calls(&pieces),
        vec![call("a", json!({})), call("b", json!({"x": 1}))]
    );
    let ids: Vec<_> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Call(c) => Some(c.id.clone()),
            Piece::Text(_) => None,
        })
        .collect();
    assert_eq!(ids, ["1", "2"], "in the answer's order");

    // SmolLM2 writes an array; some models write `parameters`, or the arguments as a string.
    let pieces = parsed(&[
        "<tool_call>[{\"name\": \"a\", \"parameters\": {\"q\": \"x\"}}, {\"name\": \"b\", \"arguments\": \"{\\\"n\\\": 2}\"}]</tool_call>",
    ]);
    assert_eq!(
        calls(&pieces),
        vec![call("a", json!({"q": "x"})), call("b", json!({"n": 2}))]
    );
}

#[test]
fn a_call_without_its_closing_tag_runs_when_the_answer_ends() {
    let pieces = same_however_cut("<tool_call>{\"name\": \"now\", \"arguments\": {}}");
    assert_eq!(calls(&pieces), vec![call("now", json!({}))]);
    assert_eq!(text(&pieces), "");
}

#[test]
fn a_tag_in_a_code_block_or_an_inline_span_is_shown_not_run() {
    let shown = "Write calls like this:\n```\n<tool_call>{\"name\": \"x\", \"arguments\": {}}</tool_call>\n```\nor inline: `<tool_call>{}</tool_call>`.\n~~~text\n<tool_call>{\"name\": \"y\"}</tool_call>\n~~~\n";
    let pieces = same_however_cut(shown);
    assert_eq!(calls(&pieces), vec![]);
    assert_eq!(text(&pieces), shown);

    // After the block closes, a call is a call again.
    let pieces = same_however_cut(
        "```\ncode\n```\n<tool_call>{\"name\": \"z\", \"arguments\": {}}</tool_call>",
    );
    assert_eq!(calls(&pieces), vec![call("z", json!({}))]);
}

#[test]
fn text_that_only_looks_like_a_tag_is_text() {
    for shown in [
        "a < b and b <tool but not a call",
        "ends with <tool_ca",
        "<",
        "<tool_call",
        "x ``",
        "~~",
    ] {
        let pieces = same_however_cut(shown);
        assert_eq!(text(&pieces), shown);
        assert_eq!(calls(&pieces), vec![]);
    }
}

#[test]
fn a_malformed_call_is_still_a_call_whose_error_says_how_to_write_it() {
    let pieces = same_however_cut(
        "<tool_call>{\"name\": \"get_sum\", \"arguments\": {\"a\": 2,</tool_call>",
    );
    let [Piece::Call(c)] = pieces.as_slice() else {
        panic!("{pieces:?}")
    };
    assert_eq!(
        c.name, "get_sum",
        "the name is read from what could be read"
    );
    let why = c.arguments.clone().unwrap_err();
    assert!(why.contains("not valid JSON"), "{why}");
    assert!(why.contains("<tool_call>{\"name\": \"TOOL_NAME\""), "{why}");

    for (written, says) in [
        ("<tool_call>\"get_sum\"</tool_call>", "not a string"),
        (
            "<tool_call>{\"arguments\": {}}</tool_call>",
            "names no tool",
        ),
        (
            "<tool_call>{\"name\": \"t\", \"arguments\": [1]}</tool_call>",
            "must be a JSON object",
        ),
    ] {
        let pieces = parsed(&[written]);
        let [Piece::Call(c)] = pieces.as_slice() else {
            panic!("{written}: {pieces:?}")
        };
        let why = c.arguments.clone().unwrap_err();
        assert!(why.contains(says), "{written}: {why}");
    }
    // An empty pair of tags is nothing.
    assert_eq!(
        parsed(&["<tool_call> </tool_call>done"]),
        vec![Piece::Text("done".into())]
    );
}

#[test]
fn a_call_fenced_inside_its_tags_is_read() {
    let pieces = parsed(&[
        "<tool_call>\n```json\n{\"name\": \"f\", \"arguments\": {\"k\": true}}\n```\n</tool_call>",
    ]);
    assert_eq!(calls(&pieces), vec![call("f", json!({"k": true}))]);
}

#[test]
fn the_prompt_lists_each_tool_and_the_format() {
    let tools = [ToolSpec {
        name: "get_sum".into(),
        description: "Adds two numbers.".into(),
        parameters: json!({"type": "object", "properties": {"a": {"type": "number"}}}),
    }];
    let prompt = tools_prompt(&tools, ToolChoice::Auto);
    assert!(prompt.contains("<tool_call>{\"name\": \"TOOL_NAME\", \"arguments\": {…}}</tool_call>"));
    let listed: Vec<Value> = prompt
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        listed,
        vec![
            json!({"name": "get_sum", "description": "Adds two numbers.", "parameters": tools[0].parameters})
        ]
    );
    assert!(!prompt.contains("must call"));
    assert!(tools_prompt(&tools, ToolChoice::Required).contains("must call at least one tool"));
}

#[test]
fn the_history_gives_calls_and_results_back_as_text() {
    let history = vec![
        ChatMessage::User {
            parts: vec![Part::Text("Add 2 and 3, and say the time".into())],
        },
        ChatMessage::Assistant {
            text: Some("Let me see.".into()),
            tool_calls: vec![
                ToolCall::new("c1".into(), "get_sum".into(), r#"{"a":2,"b":3}"#.into()),
                ToolCall::new("c2".into(), "now".into(), "{".into()),
            ],
        },
        ChatMessage::Tool {
            tool_call_id: "c1".into(),
            name: "get_sum".into(),
            content: "5".into(),
            is_error: false,
            images: vec![],
        },
        ChatMessage::Tool {
            tool_call_id: "c2".into(),
            name: "now".into(),
            content: "The arguments are not valid JSON".into(),
            is_error: true,
            images: vec![],
        },
        ChatMessage::Assistant {
            text: Some("5, and I could not read the time.".into()),
            tool_calls: vec![],
        },
    ];
    let written = as_text_history(history);
    assert_eq!(written.len(), 4);
    let ChatMessage::Assistant {
        text: Some(again),
        tool_calls,
    } = &written[1]
    else {
        panic!("{:?}", written[1])
    };
    assert!(tool_calls.is_empty());
    assert!(again.starts_with("Let me see.\n<tool_call>"), "{again}");
    // What the model wrote reads back as the same calls; arguments that were not JSON go back
    // as the string the model sent.
    let back = parsed(&[again]);
    assert_eq!(
        text(&back),
        "Let me see.\n\n",
        "each call on a line of its own"
    );
    let [_, Piece::Call(sum), _, Piece::Call(now)] = back.as_slice() else {
        panic!("{back:?}")
    };
    assert_eq!(
        (sum.name.as_str(), sum.arguments.clone().unwrap()),
        ("get_sum", json!({"a": 2, "b": 3}))
    );
    assert_eq!(
        (now.name.as_str(), now.raw_arguments.as_str()),
        ("now", "{")
    );
    assert_eq!(
        written[2],
        ChatMessage::User {
            parts: vec![
                Part::Text("<tool_result name=\"get_sum\">\n5\n</tool_result>".into()),
                Part::Text("<tool_result name=\"now\" error=\"true\">\nThe arguments are not valid JSON\n</tool_result>".into()),
            ],
        }
    );
}

#[test]
fn a_question_after_results_without_an_answer_joins_them_in_one_user_message() {
    let written = as_text_history(vec![
        ChatMessage::Assistant {
            text: None,
            tool_calls: vec![ToolCall::new("c1".into(), "now".into(), "{}".into())],
        },
        ChatMessage::Tool {
            tool_call_id: "c1".into(),
            name: "now".into(),
            content: "The run was stopped".into(),
            is_error: true,
            images: vec![],
        },
        ChatMessage::User {
            parts: vec![Part::Text("Try again".into())],
        },
    ]);
    assert_eq!(written.len(), 2, "{written:?}");
    let ChatMessage::User { parts } = &written[1] else {
        panic!("{written:?}")
    };
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[1], Part::Text("Try again".into()));
}

/// A provider that streams fixed events (the text cut as given).
struct Scripted(Vec<ProviderEvent>, std::sync::Mutex<Option<ChatRequest>>);

impl Provider for Scripted {
    fn stream(&self, request: ChatRequest, _cancel: CancellationToken) -> EventStream {
        *self.1.lock().unwrap() = Some(request);
        Box::pin(futures_util::stream::iter(
            self.0.clone().into_iter().map(Ok),
        ))
    }
    fn list_models(&self) -> ModelsFuture<'_> {
        Box::pin(async { Ok(vec![]) })
    }
}

#[tokio::test]
async fn a_prompted_provider_sends_the_tools_as_text_and_gives_back_calls() {
    let scripted = Arc::new(Scripted(
        vec![
            ProviderEvent::TextDelta("Adding.\n<tool_".into()),
            ProviderEvent::TextDelta(
                "call>{\"name\": \"get_sum\", \"arguments\": {\"a\": 2}}</tool_call>".into(),
            ),
            ProviderEvent::Finish(FinishReason::Stop),
            ProviderEvent::Usage {
                input_tokens: Some(10),
                output_tokens: Some(5),
                cached_input_tokens: None,
            },
        ],
        std::sync::Mutex::new(None),
    ));
    let prompted = Prompted::new(scripted.clone());
    let request = ChatRequest {
        model: "smollm2".into(),
        system: Some("Be brief.".into()),
        messages: vec![ChatMessage::User {
            parts: vec![Part::Text("2 + 3?".into())],
        }],
        tools: vec![ToolSpec {
            name: "get_sum".into(),
            description: "Adds.".into(),
            parameters: json!({"type": "object"}),
        }],
        ..ChatRequest::default()
    };
    let events: Vec<ProviderEvent> = prompted
        .stream(request, CancellationToken::new())
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(events[0], ProviderEvent::TextDelta("Adding.\n".into()));
    let ProviderEvent::ToolCall(c) = &events[1] else {
        panic!("{events:?}")
    };
    assert_eq!(
        (c.name.as_str(), c.arguments.clone().unwrap()),
        ("get_sum", json!({"a": 2}))
    );
    assert!(matches!(events[2], ProviderEvent::Usage { .. }));
    assert_eq!(
        events[3],
        ProviderEvent::Finish(FinishReason::ToolCalls),
        "finishes as a call"
    );
    assert_eq!(events.len(), 4);

    let sent = scripted.1.lock().unwrap().take().unwrap();
    assert!(sent.tools.is_empty(), "no native tools are sent");
    let system = sent.system.unwrap();
    assert!(system.starts_with("Be brief.\n\n# Tools"), "{system}");
    assert!(system.contains("\"name\":\"get_sum\""));
}

#[tokio::test]
async fn with_no_tools_offered_a_call_is_still_taken_out_of_the_text_but_a_model_without_tools_is_untouched(
) {
    let answer = || {
        Arc::new(Scripted(
            vec![
                ProviderEvent::TextDelta("Done. <tool_call>{\"name\": \"x\"}</tool_call>".into()),
                ProviderEvent::Finish(FinishReason::Stop),
            ],
            std::sync::Mutex::new(None),
        ))
    };
    // The last answer at the round cap offers none, but its history is full of calls: one
    // written anyway never shows as text (the loop drops it).
    let events: Vec<ProviderEvent> = Prompted::new(answer())
        .stream(ChatRequest::default(), CancellationToken::new())
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(events[0], ProviderEvent::TextDelta("Done. ".into()));
    assert!(matches!(&events[1], ProviderEvent::ToolCall(c) if c.name == "x"));
    // A model set to use no tools never saw the format: its text is its own.
    let events: Vec<ProviderEvent> = Prompted::without_tools(answer())
        .stream(ChatRequest::default(), CancellationToken::new())
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(
        events,
        vec![
            ProviderEvent::TextDelta("Done. <tool_call>{\"name\": \"x\"}</tool_call>".into()),
            ProviderEvent::Finish(FinishReason::Stop)
        ]
    );
}

#[test]
fn the_grammar_holds_calls_to_the_offered_tools_and_their_schemas() {
    let tools = vec![
        ToolSpec {
            name: "raw__echo".into(),
            description: "says it back".into(),
            parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        },
        ToolSpec {
            name: "files__read".into(),
            description: "reads a file".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "lines": {"type": "integer"},
                    "mode": {"enum": ["text", "bytes"]}
                },
                "required": ["path"]
            }),
        },
    ];
    let free = call_grammar(&tools, ToolChoice::Auto);
    assert!(
        free.starts_with("root ::= calls | prose ( \"\\n\" calls )?\n"),
        "{free}"
    );
    // Each tool by its name, its arguments by its schema: keys by name, each at most once,
    // the required first; a `<tool_call>` tag cannot be written in the prose.
    for rule in [
        r#""\"raw__echo\"" ", \"arguments\": " a0"#,
        r#"a0 ::= "{" ws ( a0-p0 )? "}" ws"#,
        r#"a1-p0 ::= "\"lines\"" ":" ws integer"#,
        r#"a1-p1 ::= "\"mode\"" ":" ws ( "\"text\"" | "\"bytes\"" ) ws"#,
        r#"a1-s0 ::= ( "," ws a1-p0 )? a1-s1"#,
        r#"a1 ::= "{" ws a1-p2 a1-s0 "}" ws"#,
        r#"prose ::= ( [^<\x00] | lt )+"#,
    ] {
        assert!(free.contains(rule), "{rule}\n{free}");
    }
    // What a schema leaves open, or cannot be met, is any object.
    let open = call_grammar(
        &[
            ToolSpec {
                name: "t".into(),
                description: String::new(),
                parameters: json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true}),
            },
            ToolSpec {
                name: "u".into(),
                description: String::new(),
                parameters: json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}),
            },
        ],
        ToolChoice::Auto,
    );
    assert!(
        open.contains(r#""\"t\"" ", \"arguments\": " object"#),
        "{open}"
    );
    assert!(
        open.contains(r#""\"u\"" ", \"arguments\": " object"#),
        "{open}"
    );
    // A tool of 300 optional properties stays linear in size.
    let wide: serde_json::Map<String, Value> = (0..300)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let wide = call_grammar(
        &[ToolSpec {
            name: "wide".into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": wide}),
        }],
        ToolChoice::Auto,
    );
    assert!(wide.len() < 40_000, "{}", wide.len());
    let required = call_grammar(&tools, ToolChoice::Required);
    assert!(required.starts_with("root ::= calls\n"), "{required}");
    // A heavy day's tools: past the budget, any object.
    let many: Vec<ToolSpec> = (0..2_000)
        .map(|i| ToolSpec {
            name: format!("t{i}"),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "number"}}, "required": ["a"]}),
        })
        .collect();
    let grammar = call_grammar(&many, ToolChoice::Auto);
    assert!(
        grammar.contains(r#""\"t1999\"" ", \"arguments\": " object"#),
        "{}",
        &grammar[..200]
    );
    assert!(grammar.len() < 256 * 1024, "{}", grammar.len());
}
