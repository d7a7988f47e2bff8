// Styles, images and fonts imported by @rancher/shell's components: nothing in jsdom.
module.exports = '';
