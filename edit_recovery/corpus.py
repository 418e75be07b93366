"""The edit-recovery corpus: realistic near-misses, and controls, over real-looking files.

Each case is one `edit` call a model might make on one sample file, with what it meant:
`meant` is the exact text of the file it was aiming at, from which the runner computes the
lines a diagnosis must name (independently of the diagnosis code). Kinds:

- ``near_miss``: old_string misses `meant` for `cause`; the edit must fail with
  FS_EDIT_NOT_FOUND, name `meant`'s lines and the cause, and change nothing.
- ``applied``: new_string is already in the file (`meant` = new_string); same, cause
  ``already_applied``.
- ``ambiguous``: old_string occurs several times; FS_AMBIGUOUS_EDIT naming every start line.
- ``exact``: old_string matches once; the edit succeeds (the control that nothing broke).
- ``absent``: old_string is nowhere near; FS_EDIT_NOT_FOUND naming no line at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

__all__ = ["CASES", "FILES", "Case", "Kind", "SampleFile"]

FILES_DIR = Path(__file__).parent / "files"

Kind: TypeAlias = Literal["near_miss", "applied", "ambiguous", "exact", "absent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleFile:
    """A file the cases edit, stored as LF text under ``files/``."""

    name: str
    """Its name in the workspace (what the model calls it)."""
    language: str
    """What kind of file it is, for the corpus summary."""
    crlf: bool = False
    """Written with CRLF line endings."""
    bom: bool = False
    """Written with a leading UTF-8 byte order mark."""

    def content(self) -> bytes:
        """The bytes the workspace file starts with."""
        text = (FILES_DIR / f"{self.name}.txt").read_text(encoding="utf-8")
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return ("\ufeff" if self.bom else "").encode("utf-8") + text.encode("utf-8")


FILES = {
    f.name: f
    for f in (
        SampleFile(name="cart.py", language="Python"),
        SampleFile(name="server.js", language="JavaScript"),
        SampleFile(name="main.go", language="Go (tabs, no final newline)"),
        SampleFile(name="config.yaml", language="YAML"),
        SampleFile(name="README.md", language="Markdown (hard line breaks, a zero-width space)"),
        SampleFile(name="Makefile", language="Makefile (tabs)"),
        SampleFile(name="InvoiceRunner.cs", language="C# (CRLF, BOM)", crlf=True, bom=True),
        SampleFile(name="announcement.md", language="prose with curly quotes and dashes"),
        SampleFile(name="test_parse.py", language="Python tests (near-copies)"),
        SampleFile(name="package.json", language="JSON"),
        SampleFile(name="cache.rs", language="Rust"),
        SampleFile(name="Get-Items.ps1", language="PowerShell (CRLF, tabs)", crlf=True),
    )
}
"""Every sample file, by workspace name."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One edit call and what a good answer to it is."""

    name: str
    """A short unique id."""
    file: str
    """The sample file edited."""
    old: str
    """old_string as the model sent it."""
    new: str
    """new_string as the model sent it."""
    kind: Kind
    """What must happen (see the module docstring)."""
    cause: str | None = None
    """The reason a diagnosis must name (a `Cause` value), for near-misses."""
    meant: str | None = None
    """The exact file text the model meant (LF line breaks), for near-misses and applied."""


def _miss(name: str, file: str, old: str, meant: str, cause: str, new: str = "") -> Case:
    return Case(
        name=name,
        file=file,
        old=old,
        new=new or old.replace("a", "A", 1) + "  # edited",
        kind="near_miss",
        cause=cause,
        meant=meant,
    )


CASES: tuple[Case, ...] = (
    # --- indentation -------------------------------------------------------------------------
    _miss(
        "py-class-indent-dropped",
        "cart.py",
        'def subtotal(self) -> Decimal:\n    total = Decimal("0")\n    for item in self.items:',
        'def subtotal(self) -> Decimal:\n        total = Decimal("0")\n'
        "        for item in self.items:",
        "indentation",
    ),
    _miss(
        "py-indent-too-deep",
        "cart.py",
        '            if not self.items:\n                return "The cart is empty."',
        '        if not self.items:\n            return "The cart is empty."',
        "indentation",
    ),
    _miss(
        "yaml-nesting-lost",
        "config.yaml",
        "resources:\n  limits:\n    cpu: 500m",
        "resources:\n    limits:\n      cpu: 500m",
        "indentation",
    ),
    _miss(
        "js-four-spaces-for-two",
        "server.js",
        "    const rows = await db.query('SELECT id, name FROM users LIMIT $1', [limit]);\n"
        "    return rows.map((row) => ({ id: row.id, name: row.name }));",
        "  const rows = await db.query('SELECT id, name FROM users LIMIT $1', [limit]);\n"
        "  return rows.map((row) => ({ id: row.id, name: row.name }));",
        "indentation",
    ),
    _miss(
        "crlf-cs-indent-dropped",
        "InvoiceRunner.cs",
        "public void Add(string customer)\n{\n    if (string.IsNullOrWhiteSpace(customer))",
        "public void Add(string customer)\n        {\n"
        "            if (string.IsNullOrWhiteSpace(customer))",
        "indentation",
    ),
    # --- tabs vs spaces ----------------------------------------------------------------------
    _miss(
        "make-recipe-with-spaces",
        "Makefile",
        "test: $(VENV)/.installed\n    $(BIN)/pytest -q",
        "test: $(VENV)/.installed\n\t$(BIN)/pytest -q",
        "tabs_vs_spaces",
    ),
    _miss(
        "make-two-recipe-lines-with-spaces",
        "Makefile",
        "lint: $(VENV)/.installed\n        $(BIN)/ruff check .\n"
        "        $(BIN)/ruff format --check .",
        "lint: $(VENV)/.installed\n\t$(BIN)/ruff check .\n\t$(BIN)/ruff format --check .",
        "tabs_vs_spaces",
    ),
    _miss(
        "go-gofmt-tabs-as-spaces",
        "main.go",
        "    if err != nil {\n        fmt.Fprintln(os.Stderr, err)\n        os.Exit(2)\n    }",
        "\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(2)\n\t}",
        "tabs_vs_spaces",
    ),
    _miss(
        "py-tabs-for-spaces",
        "cart.py",
        "\tdef add(self, item: Item) -> None:\n\t\tfor existing in self.items:",
        "    def add(self, item: Item) -> None:\n        for existing in self.items:",
        "tabs_vs_spaces",
    ),
    _miss(
        "yaml-tab-indent",
        "config.yaml",
        "healthcheck:\n\tpath: /healthz\n\tinterval: 10s",
        "healthcheck:\n  path: /healthz\n  interval: 10s",
        "tabs_vs_spaces",
    ),
    # --- trailing whitespace -----------------------------------------------------------------
    _miss(
        "md-hard-break-spaces-dropped",
        "README.md",
        "Line one of the address block\nLine two of the address block",
        "Line one of the address block  \nLine two of the address block",
        "trailing_whitespace",
    ),
    _miss(
        "py-trailing-space-added",
        "cart.py",
        "    def total(self, tax_rate: Decimal) -> Decimal: \n"
        "        discounted = self.subtotal() * (1 - self.discount)",
        "    def total(self, tax_rate: Decimal) -> Decimal:\n"
        "        discounted = self.subtotal() * (1 - self.discount)",
        "trailing_whitespace",
    ),
    # --- read's line-number prefixes ---------------------------------------------------------
    _miss(
        "py-read-prefixes",
        "cart.py",
        '28:     def subtotal(self) -> Decimal:\n29:         total = Decimal("0")',
        '    def subtotal(self) -> Decimal:\n        total = Decimal("0")',
        "line_number_prefixes",
    ),
    _miss(
        "go-read-prefixes",
        "main.go",
        "36: \tif err != nil {\n37: \t\tfmt.Fprintln(os.Stderr, err)\n38: \t\tos.Exit(2)\n39: \t}",
        "\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(2)\n\t}",
        "line_number_prefixes",
    ),
    _miss(
        "js-read-prefix-one-line",
        "server.js",
        "7: const routes = new Map();",
        "const routes = new Map();",
        "line_number_prefixes",
    ),
    _miss(
        "crlf-read-prefixes",
        "InvoiceRunner.cs",
        "19:         public int Run()\n20:         {",
        "        public int Run()\n        {",
        "line_number_prefixes",
    ),
    # --- look-alike characters ---------------------------------------------------------------
    _miss(
        "prose-straight-for-curly-quotes",
        "announcement.md",
        'We\'re excited to announce the "Lighthouse" release.',
        "We\u2019re excited to announce the \u201cLighthouse\u201d release.",
        "lookalike",
    ),
    _miss(
        "prose-straight-double-quotes",
        "announcement.md",
        '- The "Export" button now remembers your last choice.',
        "- The \u201cExport\u201d button now remembers your last choice.",
        "lookalike",
    ),
    _miss(
        "py-curly-quotes-typed-by-model",
        "cart.py",
        "            return \u201cThe cart is empty.\u201d",
        '            return "The cart is empty."',
        "lookalike",
    ),
    _miss(
        "prose-nbsp-as-space",
        "announcement.md",
        "- Prices are shown as 1 000 \u20ac in every locale.",
        "- Prices are shown as 1\u00a0000\u00a0\u20ac in every locale.",
        "lookalike",
    ),
    _miss(
        "prose-hyphen-for-en-dash",
        "announcement.md",
        "- Pages 10-20 of the guide were rewritten.",
        "- Pages 10\u201320 of the guide were rewritten.",
        "lookalike",
    ),
    _miss(
        "prose-hyphen-for-em-dash",
        "announcement.md",
        "Thanks to everyone who said \u201cship it\u201d - we heard you.",
        "Thanks to everyone who said \u201cship it\u201d \u2014 we heard you.",
        "lookalike",
    ),
    _miss(
        "prose-three-dots-for-ellipsis",
        "announcement.md",
        "- Loading... indicators appear after 300 ms.",
        "- Loading\u2026 indicators appear after 300 ms.",
        "lookalike",
    ),
    _miss(
        "md-zero-width-space-in-file",
        "README.md",
        "Computes invoices from usage records and sends them out",
        "Computes invoices from usage\u200b records and sends them out",
        "lookalike",
    ),
    # --- escaped line breaks and tabs --------------------------------------------------------
    _miss(
        "py-escaped-newline",
        "cart.py",
        "def parse_quantity(text: str) -> int:\\n    value = int(text.strip())",
        "def parse_quantity(text: str) -> int:\n    value = int(text.strip())",
        "escaped_line_breaks",
    ),
    _miss(
        "go-escaped-newline-and-tab",
        "main.go",
        "func main() {\\n\\tcfg, err := Load(os.Args[1:])",
        "func main() {\n\tcfg, err := Load(os.Args[1:])",
        "escaped_line_breaks",
    ),
    # --- a line that differs -----------------------------------------------------------------
    _miss(
        "py-misremembered-attribute",
        "cart.py",
        "        for item in self.items:\n            total += item.cost * item.quantity",
        "        for item in self.items:\n            total += item.price * item.quantity",
        "line_differs",
    ),
    _miss(
        "js-misremembered-query-param",
        "server.js",
        "  const limit = Number(url.searchParams.get('max') || 20);",
        "  const limit = Number(url.searchParams.get('limit') || 20);",
        "line_differs",
    ),
    _miss(
        "go-misremembered-default",
        "main.go",
        "\tcfg := &Config{Retries: 5}\n\tfor _, arg := range args {",
        "\tcfg := &Config{Retries: 3}\n\tfor _, arg := range args {",
        "line_differs",
    ),
    _miss(
        "yaml-misremembered-value",
        "config.yaml",
        "  replicas: 2\n  image: registry.example.com/billing:1.4.2",
        "  replicas: 3\n  image: registry.example.com/billing:1.4.2",
        "line_differs",
    ),
    _miss(
        "make-misremembered-recipe",
        "Makefile",
        "clean:\n\trm -rf $(VENV) .mypy_cache",
        "clean:\n\trm -rf $(VENV) .pytest_cache",
        "line_differs",
    ),
    _miss(
        "md-misremembered-command",
        "README.md",
        "2. Start the database: `docker compose up db`.",
        "2. Start the database: `docker compose up -d db`.",
        "line_differs",
    ),
    _miss(
        "py-mid-line-start-misremembered",
        "cart.py",
        'names = ", ".join(item.title for item in self.items)',
        'names = ", ".join(item.name for item in self.items)',
        "line_differs",
    ),
    _miss(
        "crlf-misremembered-statement",
        "InvoiceRunner.cs",
        '                Console.WriteLine($"Invoicing {customer}");\r\n                sent += 1;',
        '                Console.WriteLine($"Invoicing {customer}");\n                sent++;',
        "line_differs",
    ),
    _miss(
        "js-spacing-before-arrow",
        "server.js",
        "route('GET', '/health', (req, res)=> {",
        "route('GET', '/health', (req, res) => {",
        "spacing",
    ),
    # --- missing or extra lines --------------------------------------------------------------
    _miss(
        "py-line-skipped-by-model",
        "cart.py",
        "    def add(self, item: Item) -> None:\n        for existing in self.items:\n"
        "            if existing.name == item.name:\n                return",
        "    def add(self, item: Item) -> None:\n        for existing in self.items:\n"
        "            if existing.name == item.name:\n"
        "                existing.quantity += item.quantity\n                return",
        "extra_line",
    ),
    _miss(
        "yaml-line-skipped-by-model",
        "config.yaml",
        "    limits:\n      cpu: 500m\n    requests:",
        "    limits:\n      cpu: 500m\n      memory: 512Mi\n    requests:",
        "extra_line",
    ),
    _miss(
        "js-line-invented-by-model",
        "server.js",
        "  try {\n    await handler(req, res);\n    res.end();\n  } catch (err) {",
        "  try {\n    await handler(req, res);\n  } catch (err) {",
        "missing_line",
    ),
    _miss(
        "go-final-newline-added",
        "main.go",
        '\tfmt.Println("hello,", cfg.Name)\n}\n',
        '\tfmt.Println("hello,", cfg.Name)\n}',
        "edge_line_break",
    ),
    # --- held out: written after the code, run once untuned (10/12 first time; docs/edit-recovery)
    _miss(
        "py-test-assert-misremembered",
        "test_parse.py",
        'def test_parse_two():\n    result = parse("a,b")\n    assert result.ok is True',
        'def test_parse_two():\n    result = parse("a,b")\n    assert result.ok',
        "line_differs",
    ),
    _miss(
        "py-test-blank-line-dropped",
        "test_parse.py",
        "assert result.items == []\n\ndef test_parse_one():",
        "assert result.items == []\n\n\ndef test_parse_one():",
        "extra_line",
    ),
    _miss(
        "py-test-string-misremembered",
        "test_parse.py",
        'def test_parse_bad():\n    result = parse(",,")\n    assert not result.ok\n'
        '    assert result.error == "empty"',
        'def test_parse_bad():\n    result = parse(",,")\n    assert not result.ok\n'
        '    assert result.error == "empty item"',
        "line_differs",
    ),
    _miss(
        "py-test-lines-transposed",
        "test_parse.py",
        '    assert result.items == ["a"]\n    assert result.ok',
        '    assert result.ok\n    assert result.items == ["a"]',
        "line_order",
    ),
    _miss(
        "json-nesting-and-value",
        "package.json",
        '"scripts": {\n  "build": "vite build",\n  "test": "vitest"',
        '"scripts": {\n    "build": "vite build",\n    "test": "vitest run"',
        "indentation",
    ),
    _miss(
        "json-misremembered-flag",
        "package.json",
        '    "lint": "eslint src --ext .ts"',
        '    "lint": "eslint src --ext .ts,.tsx"',
        "line_differs",
    ),
    _miss(
        "rust-operator-misremembered",
        "cache.rs",
        "    pub fn put(&mut self, key: String, value: Vec<u8>) {\n"
        "        if self.entries.len() > self.capacity {\n            self.evict();\n        }",
        "    pub fn put(&mut self, key: String, value: Vec<u8>) {\n"
        "        if self.entries.len() >= self.capacity {\n            self.evict();\n        }",
        "line_differs",
    ),
    _miss(
        "rust-method-dedented",
        "cache.rs",
        "fn get(&self, key: &str) -> Option<&Vec<u8>> {\n    self.entries.get(key)\n}",
        "fn get(&self, key: &str) -> Option<&Vec<u8>> {\n        self.entries.get(key)\n    }",
        "indentation",
    ),
    _miss(
        "rust-struct-fields-reordered",
        "cache.rs",
        "pub struct Cache {\n    capacity: usize,\n    entries: HashMap<String, Vec<u8>>,\n}",
        "pub struct Cache {\n    entries: HashMap<String, Vec<u8>>,\n    capacity: usize,\n}",
        "line_order",
    ),
    _miss(
        "rust-escaped-newline",
        "cache.rs",
        "impl Cache {\\n    pub fn new(capacity: usize) -> Self {",
        "impl Cache {\n    pub fn new(capacity: usize) -> Self {",
        "escaped_line_breaks",
    ),
    _miss(
        "ps1-crlf-tabs-as-spaces",
        "Get-Items.ps1",
        "function Get-Items {\n    param([string]$Path)",
        "function Get-Items {\n\tparam([string]$Path)",
        "tabs_vs_spaces",
    ),
    Case(
        name="ps1-crlf-already-applied",
        file="Get-Items.ps1",
        old="\tGet-ChildItem -Path $Path -File",
        new="\tGet-ChildItem -Path $Path |\n\t\tWhere-Object { -not $_.PSIsContainer }",
        kind="applied",
        cause="already_applied",
        meant="\tGet-ChildItem -Path $Path |\n\t\tWhere-Object { -not $_.PSIsContainer }",
    ),
    # --- already applied ---------------------------------------------------------------------
    Case(
        name="py-already-applied",
        file="cart.py",
        old='    discount: Decimal = Decimal("0.0")',
        new='    discount: Decimal = Decimal("0")',
        kind="applied",
        cause="already_applied",
        meant='    discount: Decimal = Decimal("0")',
    ),
    Case(
        name="js-already-applied",
        file="server.js",
        old="const PORT = Number(process.env.PORT || 3000);",
        new="const PORT = Number(process.env.PORT || 8080);",
        kind="applied",
        cause="already_applied",
        meant="const PORT = Number(process.env.PORT || 8080);",
    ),
    Case(
        name="go-already-applied-block",
        file="main.go",
        old='\tif cfg.Verbose {\n\t\tfmt.Println("verbose")\n\t}',
        new='\tif cfg.Verbose {\n\t\tfmt.Printf("loaded %+v\\n", cfg)\n\t}',
        kind="applied",
        cause="already_applied",
        meant='\tif cfg.Verbose {\n\t\tfmt.Printf("loaded %+v\\n", cfg)\n\t}',
    ),
    # --- ambiguous ---------------------------------------------------------------------------
    Case(
        name="js-ambiguous-write-head",
        file="server.js",
        old="  res.writeHead(200, { 'Content-Type': 'application/json' });",
        new="  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });",
        kind="ambiguous",
    ),
    Case(
        name="yaml-ambiguous-list-item",
        file="config.yaml",
        old="    - name: ",
        new="    - name: X_",
        kind="ambiguous",
    ),
    Case(
        name="py-ambiguous-loop",
        file="cart.py",
        old="in self.items:",
        new="in list(self.items):",
        kind="ambiguous",
    ),
    Case(
        name="py-test-ambiguous-assert",
        file="test_parse.py",
        old="    assert result.ok\n",
        new="    assert result.ok, result.error\n",
        kind="ambiguous",
    ),
    Case(
        name="make-ambiguous-prerequisite",
        file="Makefile",
        old="$(VENV)/.installed",
        new="$(VENV)/.stamp",
        kind="ambiguous",
    ),
    # --- exact matches (controls: these must succeed) ----------------------------------------
    Case(
        name="py-exact",
        file="cart.py",
        old="        return total\n",
        new='        return total.quantize(Decimal("0.01"))\n',
        kind="exact",
    ),
    Case(name="go-exact", file="main.go", old="os.Exit(2)", new="os.Exit(1)", kind="exact"),
    Case(
        name="crlf-exact-with-lf-old-string",
        file="InvoiceRunner.cs",
        old="            return sent;\n        }",
        new="            return sent; // total\n        }",
        kind="exact",
    ),
    # --- issue 41: written after the code and run once, never tuned on ----------------------
    Case(
        name="py-stitched-two-methods",
        file="cart.py",
        old="    def add(self, item: Item) -> None:\n        for existing in self.items:\n"
        '    def subtotal(self) -> Decimal:\n        total = Decimal("0")\n',
        new="    pass\n",
        kind="near_miss",
        cause="left_out_lines",
        meant="".join(
            line + "\n"
            for line in (
                "    def add(self, item: Item) -> None:",
                "        for existing in self.items:",
                "            if existing.name == item.name:",
                "                existing.quantity += item.quantity",
                "                return",
                "        self.items.append(item)",
                "",
                "    def subtotal(self) -> Decimal:",
                '        total = Decimal("0")',
            )
        ),
    ),
    Case(
        name="js-stitched-two-routes",
        file="server.js",
        old="route('GET', '/health', (req, res) => {\nroute('GET', '/users', async (req, res) => {",
        new="route('GET', '/users', (req, res) => {",
        kind="near_miss",
        cause="left_out_lines",
        meant="route('GET', '/health', (req, res) => {\n"
        "  res.writeHead(200, { 'Content-Type': 'application/json' });\n"
        "  res.end(JSON.stringify({ status: 'ok' }));\n"
        "});\n\n"
        "route('GET', '/users', async (req, res) => {",
    ),
    Case(
        name="go-stitched-three-pieces",
        file="main.go",
        old='\tcfg := &Config{Retries: 3}\n\tif cfg.Name == "" {\n\t\treturn nil, ErrEmptyName\n',
        new="\tcfg := &Config{Retries: 5}\n",
        kind="near_miss",
        cause="left_out_lines",
        meant="\tcfg := &Config{Retries: 3}\n"
        "\tfor _, arg := range args {\n"
        "\t\tswitch {\n"
        '\t\tcase strings.HasPrefix(arg, "--name="):\n'
        '\t\t\tcfg.Name = strings.TrimPrefix(arg, "--name=")\n'
        '\t\tcase arg == "--verbose":\n'
        "\t\t\tcfg.Verbose = true\n"
        "\t\t}\n"
        "\t}\n"
        '\tif cfg.Name == "" {\n'
        "\t\treturn nil, ErrEmptyName\n",
    ),
    Case(
        name="py-applied-apart-from-indentation",
        file="cart.py",
        old="    if not self.items:\n        return 'Empty.'",
        new='if not self.items:\n    return "The cart is empty."\n'
        'names = ", ".join(item.name for item in self.items)',
        kind="applied",
        cause="already_applied",
        meant='        if not self.items:\n            return "The cart is empty."\n'
        '        names = ", ".join(item.name for item in self.items)',
    ),
    Case(
        name="js-applied-beside-a-near-copy",
        file="server.js",
        old="  res.writeHead(200, { 'Content-Type': 'application/json' });\n"
        "  res.end(JSON.stringify(result));",
        new="  res.writeHead(200, { 'Content-Type': 'application/json' });\n"
        "  res.end(JSON.stringify({ status: 'ok' }));",
        kind="applied",
        cause="already_applied",
        meant="  res.writeHead(200, { 'Content-Type': 'application/json' });\n"
        "  res.end(JSON.stringify({ status: 'ok' }));",
    ),
    Case(
        name="rust-stale-signature-invented-body",
        file="cache.rs",
        old="    pub fn get(&mut self, name: String) -> Vec<u8> {\n"
        "        let hit = self.lookup_and_touch(name);\n"
        "        hit.map(|entry| entry.clone()).unwrap_or_default()\n    }",
        new="    pub fn get(&self, key: &str) -> Option<Vec<u8>> {\n        None\n    }",
        kind="near_miss",
        cause="loosely_similar",
        meant="    pub fn get(&self, key: &str) -> Option<&Vec<u8>> {\n"
        "        self.entries.get(key)\n    }",
    ),
    Case(
        name="py-stale-def-invented-body",
        file="cart.py",
        old="def parse_quantity(raw, *, strict=True):\n"
        "    cleaned = raw.replace(',', '').strip()\n"
        "    if strict and not cleaned.isdigit():\n"
        "        raise InvalidQuantity(raw)\n",
        new="def parse_quantity(raw):\n    return int(raw)\n",
        kind="near_miss",
        cause="loosely_similar",
        meant="def parse_quantity(text: str) -> int:\n"
        "    value = int(text.strip())\n"
        "    if value < 0:\n"
        '        raise ValueError("quantity must not be negative")\n'
        "    return value",
    ),
    # --- genuinely absent (controls: no line may be named) -----------------------------------
    Case(
        name="py-absent",
        file="cart.py",
        old="def apply_coupon(self, code: str) -> None:\n    self.coupons.append(code)",
        new="def apply_coupon(self, code: str) -> None:\n    self.coupons.add(code)",
        kind="absent",
    ),
    Case(
        name="js-absent",
        file="server.js",
        old="app.use(express.static('public'));",
        new="app.use(express.static('dist'));",
        kind="absent",
    ),
    Case(
        name="go-absent",
        file="main.go",
        old="func (c *Config) Validate() error {\n\treturn validator.Struct(c)\n}",
        new="func (c *Config) Validate() error {\n\treturn nil\n}",
        kind="absent",
    ),
    Case(
        name="yaml-absent",
        file="config.yaml",
        old="ingress:\n  host: billing.example.com\n  tls: true",
        new="ingress:\n  host: billing.example.org\n  tls: true",
        kind="absent",
    ),
    Case(
        name="rust-absent",
        file="cache.rs",
        old="impl Drop for Cache {\n    fn drop(&mut self) {\n        self.flush();\n    }\n}",
        new="",
        kind="absent",
    ),
    Case(
        name="md-absent",
        file="README.md",
        old="## Deploying to Kubernetes\n\nRun `helm install billing ./chart`.",
        new="## Deploying\n\nRun `helm install billing ./chart`.",
        kind="absent",
    ),
)
"""The whole corpus, in a stable order."""
