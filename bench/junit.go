package bench

import (
	"encoding/xml"
	"io"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes rs as a JUnit XML report: one testsuite per backend
// suite (node, simple, ...), named "onnx-backend.SUITE on DEVICE". A
// failure expected by e is reported as skipped with its reason; a skipped
// test as skipped with the runner's reason.
func WriteJUnit(w io.Writer, device string, rs []ConformanceResult, e Expectations) error {
	var all junitSuites
	at := map[string]int{}
	for _, r := range rs {
		suite, name, ok := strings.Cut(r.Name, "/")
		if !ok {
			suite, name = "tests", r.Name
		}
		i, seen := at[suite]
		if !seen {
			i = len(all.Suites)
			at[suite] = i
			all.Suites = append(all.Suites, junitSuite{Name: "onnx-backend." + suite + " on " + device})
		}
		s := &all.Suites[i]
		c := junitCase{Name: name, Classname: "onnx-backend." + suite, Time: r.Duration.Seconds()}
		reason, expected := e[r.Name]
		switch {
		case r.Status == Fail && expected:
			c.Skipped = &junitMessage{Message: "expected failure: " + reason, Text: r.Reason}
			s.Skipped++
		case r.Status == Fail:
			c.Failure = &junitMessage{Message: firstLine(r.Reason), Type: "mismatch", Text: r.Reason}
			s.Failures++
		case r.Status == Skip:
			c.Skipped = &junitMessage{Message: r.Reason}
			s.Skipped++
		}
		s.Tests++
		s.Time += c.Time
		s.Cases = append(s.Cases, c)
	}
	for _, s := range all.Suites {
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Skipped += s.Skipped
		all.Time += s.Time
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
