# report.md as the pages job publishes it (.github/workflows/nix.yml): wrapped in
# {% raw %}...{% endraw %}, rendered by Liquid (strict: an unknown variable or filter is an
# error), then by kramdown with its GFM parser, as Jekyll does. Prints the HTML; a Liquid
# error fails.
#
#     ruby tests/hostile/render_markdown.rb REPORT.md > REPORT.html
#
# Driven by tests/hostile.rs. `site.x` is defined, so a `{{ site.x }}` that Liquid evaluated
# shows as LIQUID-EVALUATED in the HTML.
require "liquid"
require "kramdown"
require "kramdown-parser-gfm"

markdown = File.read(ARGV.fetch(0), encoding: "UTF-8")
page = "{% raw %}\n" + markdown + "\n{% endraw %}\n"
template = Liquid::Template.parse(page, error_mode: :strict)
rendered = template.render!({ "site" => { "x" => "LIQUID-EVALUATED" } },
                            strict_variables: true, strict_filters: true)
html = Kramdown::Document.new(rendered, input: "GFM", hard_wrap: false, auto_ids: true).to_html
print html
