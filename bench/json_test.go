package bench

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askuser-go/askuser"
)

// The JSON work of one question, measured alone, so that it can be set beside the
// standard library's (json_v2_test.go adds encoding/json/v2 and jsontext on Go 1.27).

// askData is the data of the ask event for args, as the dispatcher sends it.
func askData(args []byte) askuser.AskData {
	req, err := askuser.ParseArguments(args)
	if err != nil {
		panic(err)
	}
	return askuser.AskData{RequestID: "call_0123456789abcdef", Questions: req.Questions, Metadata: req.Metadata,
		ExpiresAt: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)}
}

// answer is a device's answer to the first question of args, as it arrives.
var answerData = []byte(`{"requestId":"call_0123456789abcdef","answers":[{"question":"Which framework should we use for the new module?","selectedLabels":["Vue 3 (Recommended)"],"customInput":null}]}`)

var jsonShapes = []struct {
	name string
	args []byte
}{{"typical", typicalArgs}, {"4q4o-previews", fourArgs}}

// BenchmarkEncodeAsk is the ask event's data and envelope, as every transport writes it:
// askuser's encoder (askuser.NewEvent, then Event.Encode) beside encoding/json's Marshal
// of the same AskData and of the same envelope.
func BenchmarkEncodeAsk(b *testing.B) {
	for _, c := range jsonShapes {
		a := askData(c.args)
		b.Run("askuser/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ev, err := askuser.NewEvent(askuser.EventAsk, askuser.IntSession(123), a)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ev.Encode(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encoding-json/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				data, err := json.Marshal(a)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(askuser.Event{Type: askuser.EventAsk, SessionID: askuser.IntSession(123), Data: data}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeArguments is the model's arguments read into a Request: askuser's
// ParseArguments, which also validates them against the schema and the rules a schema
// cannot say, beside encoding/json's Unmarshal, which only decodes (a floor, not a
// replacement).
func BenchmarkDecodeArguments(b *testing.B) {
	for _, c := range jsonShapes {
		b.Run("askuser-validated/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := askuser.ParseArguments(c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encoding-json-decode-only/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r askuser.Request
				if err := json.Unmarshal(c.args, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeAnswer is a device's answer event read and handed over: askuser's
// ParseEvent of the envelope, beside encoding/json's Unmarshal of the envelope and of its
// data into ResultData.
func BenchmarkDecodeAnswer(b *testing.B) {
	msg := []byte(`{"type":"ask_user_questions_result","sessionId":123,"data":` + string(answerData) + `}`)
	b.Run("askuser", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := askuser.ParseEvent(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ev askuser.Event
			if err := json.Unmarshal(msg, &ev); err != nil {
				b.Fatal(err)
			}
			var data askuser.ResultData
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
