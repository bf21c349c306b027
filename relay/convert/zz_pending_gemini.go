package convert

// NewGeminiArrayEncoder is a placeholder until the Gemini codec lands (it writes the stream as SSE).
func NewGeminiArrayEncoder(req *Request) Encoder {
	c, _ := For(0)
	return c.NewEncoder(req)
}
