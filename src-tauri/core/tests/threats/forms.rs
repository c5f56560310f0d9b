//! A server cannot bury the person in forms: at most three of one server's forms are open at
//! once (more are declined at once, another server's still show), a form of more than fifty
//! fields is declined unseen, and its texts are cut to what a person can read.

use std::time::Duration;

use switchboard_core::mcp::elicitation::{
    ElicitField, ElicitationAnswer, ElicitationBroker, ElicitationRequest, Elicitor, FieldKind,
    MAX_FIELDS, MAX_OPEN_PER_SERVER,
};

fn form(server: &str, id: usize, fields: usize, message: &str) -> ElicitationRequest {
    ElicitationRequest {
        id: format!("{server}-{id}"),
        server: server.to_owned(),
        message: message.to_owned(),
        fields: (0..fields)
            .map(|i| ElicitField {
                name: format!("f{i}"),
                title: Some("t".repeat(10_000)),
                description: None,
                required: false,
                kind: FieldKind::Text {
                    format: None,
                    min_length: None,
                    max_length: None,
                },
                default: None,
            })
            .collect(),
        url: None,
    }
}

#[tokio::test]
async fn form_flood_from_one_server_is_capped_and_texts_are_cut() {
    let broker = ElicitationBroker::default().with_timeout(Duration::from_secs(30));
    let mut shown = broker.listen();
    let asks: Vec<_> = (0..10)
        .map(|i| tokio::spawn(broker.elicit(form("flood", i, 1, &"m".repeat(1_000_000)))))
        .collect();
    // Seven are declined at once; three wait for the person.
    while broker.open().len() < MAX_OPEN_PER_SERVER
        || asks.iter().filter(|a| a.is_finished()).count() < 10 - MAX_OPEN_PER_SERVER
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (done, waiting): (Vec<_>, Vec<_>) = asks.into_iter().partition(|a| a.is_finished());
    assert_eq!(waiting.len(), MAX_OPEN_PER_SERVER);
    for ask in done {
        assert_eq!(ask.await.unwrap(), ElicitationAnswer::Decline);
    }
    let open = broker.open();
    assert_eq!(open.len(), MAX_OPEN_PER_SERVER);
    for form in &open {
        assert_eq!(form.message.chars().count(), 4_000, "the message is cut");
        assert!(form.message.ends_with('…'));
        assert_eq!(form.fields[0].title.as_ref().unwrap().chars().count(), 500);
    }
    let mut seen = 0;
    while shown.try_recv().is_ok() {
        seen += 1;
    }
    assert_eq!(
        seen, MAX_OPEN_PER_SERVER,
        "only the open ones reached the window"
    );

    // Another server's form still shows; a form of too many fields never does.
    let other = tokio::spawn(broker.elicit(form("other", 0, 2, "Deploy?")));
    let huge = broker
        .elicit(form("other", 1, MAX_FIELDS + 1, "Fill these in"))
        .await;
    assert_eq!(huge, ElicitationAnswer::Decline);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(shown.try_recv().unwrap().id, "other-0");
    assert!(shown.try_recv().is_err());
    broker.answer("other-0", ElicitationAnswer::Cancel).unwrap();
    assert_eq!(other.await.unwrap(), ElicitationAnswer::Cancel);
}
