package wire

// Bounds of the arguments as the tool advertises them, for hosts and adapters that build
// questions in Go. The input schema, schema/input.json, is where they are said;
// TestLimitsMatchSchema holds these to it. askuser.ParseArguments and askuser.Request.Validate read
// more liberally (a header of up to 100 characters or none, 0 to 8 options), and devices show
// such questions; docs/ERRORS.md has the table.
const (
	MaxQuestions    = 4  // questions in one call, at least one
	MinOptions      = 2  // options of a question
	MaxOptions      = 4  // options of a question
	MaxHeaderLength = 12 // characters of a header
)

// Bounds of what the library takes.
const (
	// MaxArgumentsBytes bounds the model's arguments as received.
	MaxArgumentsBytes = 256 << 10
	// MaxRequestIDBytes bounds a request id: a tool-call id, or one a dispatcher makes.
	MaxRequestIDBytes = 256
)

// Option is one choice of a [Question].
type Option struct {
	// Label is the display text, also what an answer names in selectedLabels.
	Label string `json:"label"`
	// Description explains what choosing this option means. Advertised as required; an
	// empty one is accepted, and nothing is shown under the label.
	Description string `json:"description,omitempty"`
	// Preview is optional markdown shown in a monospace box beside a single-select question.
	Preview string `json:"preview,omitempty"`
}

// Question is one question of a call; a call asks 1 to 4 of them at once.
type Question struct {
	// Question is the complete question; it identifies the question within its call.
	Question string `json:"question"`
	// Header is a very short label shown as a chip: at most 12 characters advertised, up
	// to 100 accepted, shown shortened on the chip and whole elsewhere. It may be empty
	// (the model gave none): then there is no chip.
	Header string `json:"header"`
	// Options are the choices, 2 to 4 advertised and 0 to 8 accepted; every client adds
	// its own free-text "Other". A question without options is answered in free text
	// alone: its "Other" box is all there is.
	Options []Option `json:"options"`
	// MultiSelect allows several options to be chosen.
	MultiSelect bool `json:"multiSelect"`
	// Placeholder is an optional hint shown in the empty free-text box. It is not in
	// the advertised schema; models trained on other tools write it.
	Placeholder string `json:"placeholder,omitempty"`
}

// Answer is the person's answer to one question.
type Answer struct {
	// Question is the text of the question answered, exactly as asked.
	Question string `json:"question"`
	// SelectedLabels are the labels of the chosen options: at most one for a
	// single-select question. Never nil in a validated answer.
	SelectedLabels []string `json:"selectedLabels"`
	// CustomInput is the "Other" free text, or nil when none was typed.
	CustomInput *string `json:"customInput"`
}
