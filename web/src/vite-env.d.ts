// Lets TypeScript accept CSS imports handled by Vite.
declare module '*.css';
