//go:build !askuser_nofast

package askuser

import (
	"reflect"
	"testing"

	"github.com/askuser-go/askuser/internal/jsonread"
)

// The fast paths (parseArgumentsFast, decodeResultDataFast) must agree with the
// reference paths they stand in for: the fuzz targets below check it for any input, and
// the tests that the fast paths are taken at all, for the forms models and devices send.
// (The build tag askuser_nofast leaves them out, with this file.)

// fastArgs are arguments the fast path must take: the forms models send.
var fastArgs = []string{
	`{"questions":[{"question":"Which framework?","header":"Framework","options":[{"label":"Vue","description":"Composition API"},{"label":"React","description":"Hooks"}],"multiSelect":false}]}`,
	` { "questions" : [ { "multiSelect" : true , "options" : [ { "description" : "d\u00e9j\u00e0 \"vu\"\n" , "label" : "Vue <3> & co" , "preview" : "` + "```go\\n\\tx := 1\\n```" + `" } , { "label" : "日本語", "description" : "x\/y" } ] , "header" : "Héllo" , "question" : "Which?" } ] , "metadata" : { "n" : 1.50, "b": [true, null, -2e3], "s": "<>&" } } `,
	`"{\"questions\":[{\"question\":\"Q?\",\"header\":\"H\",\"options\":[{\"label\":\"a\",\"description\":\"b\"},{\"label\":\"c\",\"description\":\"d\"}],\"multiSelect\":false}]}"`,
	`{"questions":"[{\"question\":\"Q?\",\"header\":\"H\",\"options\":[{\"label\":\"a\",\"description\":\"b\"},{\"label\":\"c\",\"description\":\"d\"}],\"multiSelect\":false}]","metadata":{}}`,
	// As strict schema dialects make models write it: every member present, null for absent.
	`{"questions":[{"question":"Q?","header":"H","options":[{"label":"a","description":"b","preview":null},{"label":"c","description":"d","preview":"# d"}],"multiSelect":false}],"metadata":null}`,
}

func TestParseArgumentsFastPathTakesCommonForms(t *testing.T) {
	for _, args := range fastArgs {
		fast, ok := parseArgumentsFast([]byte(args))
		if !ok {
			t.Errorf("fast path refused %s", args)
			continue
		}
		slow, err := parseArgumentsSlow([]byte(args))
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Errorf("fast %+v, slow %+v, %v", fast, slow, err)
		}
	}
	for _, tc := range ArgumentCases {
		if tc.Problems == nil {
			continue
		}
		if _, ok := parseArgumentsFast([]byte(tc.Args)); ok {
			t.Errorf("%s: fast path took invalid arguments", tc.Name)
		}
	}
}

// FuzzParseArgumentsFastAgreesWithSlow: whatever the fast path takes, the slow path takes
// too, with the same Request.
func FuzzParseArgumentsFastAgreesWithSlow(f *testing.F) {
	for _, a := range fastArgs {
		f.Add([]byte(a))
	}
	for _, tc := range ArgumentCases {
		if len(tc.Args) < 4096 {
			f.Add([]byte(tc.Args))
		}
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		fast, ok := parseArgumentsFast(args)
		slow, err := parseArgumentsSlow(args)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("fast path took what the slow path refuses: %v\n%s", err, args)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast %#v\nslow %#v\n%s", fast, slow, args)
		}
	})
}

// fastResults are device results the fast path must take.
var fastResults = []string{
	`{"requestId":"r1","answers":[{"question":"Which framework?","selectedLabels":["Vue"],"customInput":null}]}`,
	` {"answers" : [ {"customInput":"my \"own\"\n\u00e9","selectedLabels":[],"question":"Q"}, {"question":"Q2","selectedLabels":null} ], "requestId":"r\u0031"} `,
	`{"requestId":"r1","declined":true}`,
	`{"requestId":"r1","answers":[],"declined":false}`,
	`{"requestId":"r1","answers":null}`,
}

func TestResultDataFastPathTakesCommonForms(t *testing.T) {
	for _, msg := range fastResults {
		if _, ok := decodeResultDataFast([]byte(msg)); !ok {
			t.Errorf("fast path refused %s", msg)
		}
	}
}

// FuzzResultDataFastAgreesWithTree: whatever the fast path takes, the reference
// decoding (resultDataFromTree) takes too, with the same ResultData.
func FuzzResultDataFastAgreesWithTree(f *testing.F) {
	for _, m := range fastResults {
		f.Add([]byte(m))
	}
	for _, tc := range DeviceCases {
		if ev, err := ParseEvent([]byte(tc.Msg)); err == nil && len(ev.Data) < 4096 {
			f.Add([]byte(ev.Data))
		}
	}
	f.Add([]byte(`{"RequestId":"r1"}`))
	f.Add([]byte(`{"requestId":"r1"} ]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeResultDataFast(b)
		if !ok {
			return
		}
		tree, err := jsonread.Decode(b)
		if err != nil {
			t.Fatalf("fast path took invalid JSON: %v\n%s", err, b)
		}
		slow, problem := resultDataFromTree(tree)
		if problem != "" {
			t.Fatalf("fast path took what the reference refuses: %s\n%s", problem, b)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("fast %#v\nslow %#v\n%s", fast, slow, b)
		}
	})
}
