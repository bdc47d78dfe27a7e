// Added to a copy of Legion Prof's legacy viewer by legion-legacy-picture.sh:
// once the viewer has drawn, it opens every node's processors and hovers the
// first box whose title starts with ?pick=, as a user's mouse would, so that
// a headless browser's screenshot shows that box's popup.
(function () {
	var pick = new URLSearchParams(window.location.search).get("pick") || "";

	function expandNodes() {
		state.flattenedLayoutData.forEach(function (element) {
			if (element.type == "util" && element.depth == 0 && !element.expanded)
				expandHandler(element);
		});
	}

	function hover() {
		var box = null;

		d3.select("#timeline").selectAll("rect").each(function (d) {
			if (!box && d && d.title && d.title.indexOf(pick) == 0)
				box = this;
		});
		if (!box) {
			document.title = "no box titled " + pick;
			return;
		}
		var at = box.getBoundingClientRect();
		box.dispatchEvent(new MouseEvent("mouseover", {
			clientX: at.left + Math.min(at.width / 2, 40),
			clientY: at.top + at.height / 2,
			bubbles: true
		}));
	}

	setTimeout(expandNodes, 1500);
	setTimeout(hover, 4000);
})();
