// One device of the example's one session: the panel, on the example's WebSocket hub.
AskUser.connect({url: "/ws", container: document.getElementById("questions")});
