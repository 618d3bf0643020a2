// Package wshub is a WebSocket [wire.Transport]: it carries ask_user_questions events to
// every browser or app connected for a session, and feeds their answers back to the
// [askuser.Dispatcher], checking that each connection acts only for the sessions it was
// authorized for.
//
// A host creates one [Hub], gives it to [askuser.New] as the dispatcher's transport (New
// binds the two), and serves the hub as an HTTP handler:
//
//	hub := wshub.New(&wshub.Options{
//		Authorize: func(r *http.Request) ([]askuser.SessionID, error) {
//			user, err := authenticate(r) // the host's own login check
//			if err != nil {
//				return nil, err
//			}
//			return user.Sessions(), nil
//		},
//	})
//	d := askuser.New(hub, nil)
//	mux.Handle("/askuser/", http.StripPrefix("/askuser/", wshub.PanelHandler()))
//	...
//	d.Close()
//	hub.Close()
//
// Each connection gets the session's pending requests as soon as it connects, then every
// event of its sessions. One slow or dead connection never delays another: each has its
// own bounded queue and writer, and is dropped when it falls behind. What a connection
// sends is parsed with [wire.ParseEvent]; answers (ask_user_questions_result) and
// decisions (tool_approval_result) go to the dispatcher, any other type to
// [Options.OnEvent], and every refusal goes back to that connection alone as an
// ask_user_questions_error event.
//
// A hub that authenticates people ([Options.Authenticate], which names the user and
// their groups) also routes approvals to people: an approval whose approvers
// ([askuser.Approvers]) name a user or a group reaches every connection of that person,
// whatever sessions it was granted, and that connection may decide it. Such a connection
// is first sent an inbox event (who it is connected as, and the approvals decided lately),
// and [Hub.Inbox] gives a host the same list in Go. docs/APPROVALS.md has the whole story.
//
// The hub also implements [wire.Presence], so the dispatcher's [askuser.Options.FailWithoutDevice]
// and [askuser.Options.FailOnDisconnect] policies see which sessions have a device connected.
package wshub
