// Export a picture: the serialised SVG as a file, or a PNG drawn from it on a canvas.

import { SVG_NS } from "./svg.js";

// The SVG as a standalone XML document (namespace and size attributes included).
export function serialiseSvg(svg) {
  const copy = svg.cloneNode(true);
  copy.setAttribute("xmlns", SVG_NS);
  copy.removeAttribute("id");
  copy.removeAttribute("class");
  for (const node of copy.querySelectorAll(".active")) node.classList.remove("active");
  const text = new XMLSerializer().serializeToString(copy);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${text}\n`;
}

function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function exportSvg(svg, filename = "attention.svg") {
  download(new Blob([serialiseSvg(svg)], { type: "image/svg+xml" }), filename);
}

// Draw the SVG on a canvas at `scale` times its size and download it as PNG.
export function exportPng(svg, filename = "attention.png", scale = 2) {
  const width = Number(svg.getAttribute("width"));
  const height = Number(svg.getAttribute("height"));
  const source = URL.createObjectURL(new Blob([serialiseSvg(svg)], { type: "image/svg+xml" }));
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.ceil(width * scale);
      canvas.height = Math.ceil(height * scale);
      const context = canvas.getContext("2d");
      context.fillStyle = "#ffffff";
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(image, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(source);
      canvas.toBlob((blob) => {
        if (blob) {
          download(blob, filename);
          resolve();
        } else {
          reject(new Error("the canvas could not be encoded as PNG"));
        }
      }, "image/png");
    };
    image.onerror = () => {
      URL.revokeObjectURL(source);
      reject(new Error("the SVG could not be drawn"));
    };
    image.src = source;
  });
}
