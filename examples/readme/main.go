// Command readme is the README's quick start, as it stands there: a host that asks one
// question in the browser and prints the tool result. Run it, open
// http://127.0.0.1:8080 and answer.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"

	"github.com/askuser-go/askuser"
	"github.com/askuser-go/askuser/wshub"
)

// A page with the panel; your app's page would load the same two files.
const page = `<!doctype html><meta charset="utf-8"><link rel="icon" href="/askuser/icon.svg">
<link rel="stylesheet" href="/askuser/panel.css"><script src="/askuser/panel.js"></script>
<div id="questions"></div>
<script>AskUser.connect({url: "/ws", container: document.getElementById("questions")});</script>`

func main() {
	session := askuser.IntSession(123)
	hub := wshub.New(&wshub.Options{
		// Your authentication: which sessions may this request act for? (This one lets
		// everybody in as session 123. The hub reads nothing else of the request.)
		Authorize: func(r *http.Request) ([]askuser.SessionID, error) {
			return []askuser.SessionID{session}, nil
		},
	})
	d := askuser.New(hub, nil) // binds the hub to d; a 5-minute timeout, UUID v4 request ids
	defer hub.Close()
	defer d.Close() // first: every device is told, then the hub closes

	mux := http.NewServeMux()
	mux.Handle("/ws", hub)
	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) })
	go func() { log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux)) }()

	// In the agent loop, for each tool call named askuser.ToolName ("ask_user_questions"):
	res := d.Dispatch(context.Background(), askuser.ToolCall{
		Session: session,  // whose devices to ask
		ID:      "call_1", // the model's tool-call id
		Arguments: json.RawMessage(`{"questions": [{
			"question": "Which database should the service use?",
			"header": "Database",
			"options": [
				{"label": "PostgreSQL (Recommended)", "description": "Relational, already in production"},
				{"label": "SQLite", "description": "One file, no server"}
			],
			"multiSelect": false}]}`),
	})
	// The tool result for the model, and the error flag its API takes beside it.
	fmt.Println(res.Content, res.IsError())
}
