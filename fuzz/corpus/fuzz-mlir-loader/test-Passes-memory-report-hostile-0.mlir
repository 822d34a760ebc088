// Names and locations are the input's: quotes, newlines, markup, control
// characters and bytes that are not UTF-8 reach every output escaped or
// replaced, so the JSON and the SVG always parse.

// The terminal gets non-printable bytes as \XX.
// TABLE: memory of @evil\22\0A</text>&\FF\01'\EF\BF\BE (mode none, 2 launches, 1 temporary)
// TABLE: peak at launch 0 (relu, q\22uote\0Anew\\line\FE]]></svg>\00);

// JSON escapes quotes, backslashes and control characters; the bytes that
// are not UTF-8 (\FF, \FE) become U+FFFD.
// JSON: "function": "evil\"\n</text>&�\u0001'{{.+}}",
// JSON: "peak_location": "q\"uote\nnew\\line�]]></svg>\u0000",
// JSON: "location": "q\"uote\nnew\\line�]]></svg>\u0000",

// XML escapes markup; the control character and U+FFFE, which XML 1.0
// forbids, become U+FFFD.
// SVG:      Live temporaries of @evil&quot;
// SVG-NEXT: &lt;/text&gt;&amp;��&apos;� (none, 2 launches)</text>

func.func @"evil\"\0A</text>&\FF\01'\EF\BF\BE"(%x: memref<4xf32>) -> memref<f32> attributes {fluid.entry} {
  %a = memref.alloc() : memref<4xf32>
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) params {} loc("q\"uote\0Anew\\line\FE]]></svg>\00")
  %r = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%a : memref<4xf32>) outs(%r : memref<f32>) params {}
  return %r : memref<f32>
}
