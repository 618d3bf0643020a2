//go:build go1.27

package bench

import (
	"bytes"
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
	"testing"

	"github.com/askuser-go/askuser"
)

// On Go 1.27, encoding/json/v2 and jsontext are in the standard library: these measure
// what the hand-written JSON paths would be replaced by once Go 1.26 leaves support.

func BenchmarkEncodeAskV2(b *testing.B) {
	for _, c := range jsonShapes {
		a := askData(c.args)
		b.Run("json-v2/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				data, err := jsonv2.Marshal(a, jsontext.EscapeForHTML(false))
				if err != nil {
					b.Fatal(err)
				}
				env := struct {
					Type      string            `json:"type"`
					SessionID askuser.SessionID `json:"sessionId"`
					Data      jsontext.Value    `json:"data"`
				}{askuser.EventAsk, askuser.IntSession(123), data}
				if _, err := jsonv2.Marshal(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeArgumentsV2(b *testing.B) {
	for _, c := range jsonShapes {
		b.Run("json-v2-decode-only/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r askuser.Request
				if err := jsonv2.Unmarshal(c.args, &r, jsonv2.RejectUnknownMembers(true)); err != nil {
					b.Fatal(err)
				}
			}
		})
		// jsontext alone: every token read once, nothing built; what a validating
		// reader on top of it could not go below.
		b.Run("jsontext-tokens-only/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dec := jsontext.NewDecoder(bytesReader(c.args))
				for {
					if _, err := dec.ReadToken(); err != nil {
						break
					}
				}
			}
		})
	}
}

func BenchmarkDecodeAnswerV2(b *testing.B) {
	msg := []byte(`{"type":"ask_user_questions_result","sessionId":123,"data":` + string(answerData) + `}`)
	b.Run("json-v2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var ev struct {
				Type      string            `json:"type"`
				SessionID askuser.SessionID `json:"sessionId"`
				Data      jsontext.Value    `json:"data"`
			}
			if err := jsonv2.Unmarshal(msg, &ev, jsonv2.RejectUnknownMembers(true)); err != nil {
				b.Fatal(err)
			}
			var data askuser.ResultData
			if err := jsonv2.Unmarshal(ev.Data, &data, jsonv2.RejectUnknownMembers(true)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
